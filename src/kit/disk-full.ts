// A full data volume must be reported as such, naming what could not be saved, instead of surfacing as
// a bare internal error. SQLite says SQLITE_FULL (also for max_page_count); the file system ENOSPC.

const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT']);

export class DiskFullError extends Error {
  readonly code = 'DISK_FULL';
  constructor(
    /** What failed, in words a user understands: "saving the profile of alice". */
    readonly operation: string,
    cause: unknown,
  ) {
    super(`disk full: ${operation} failed; free space on the data volume and try again`, { cause });
  }
}

export function isDiskFull(error: unknown): boolean {
  if (error instanceof DiskFullError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DISK_FULL_CODES.has(code);
}

/** Runs a write; a full disk becomes a DiskFullError naming the operation, other errors pass through. */
export function guardDiskFull<T>(operation: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (error instanceof DiskFullError) throw error;
    if (isDiskFull(error)) throw new DiskFullError(operation, error);
    throw error;
  }
}

/** The message to show for any error: the disk-full sentence (with the operation when known) or undefined. */
export function diskFullMessage(error: unknown, fallbackOperation: string): string | undefined {
  if (error instanceof DiskFullError) return error.message;
  if (isDiskFull(error)) return new DiskFullError(fallbackOperation, error).message;
  return undefined;
}
