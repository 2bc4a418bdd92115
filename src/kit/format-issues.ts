// One line of text from a list of validation problems, each a JSON Pointer to the offending value and
// what is wrong with it.

/** A problem found in a document: where (a JSON Pointer, '' for the document itself) and what. */
export interface PathedIssue {
  path: string;
  message: string;
}

export interface FormatIssuesOptions {
  /**
   * How a problem of the whole document is shown. '/' (the default) keeps every entry in the
   * `path: message` shape, for logs and errors about a document; 'omit' leaves the path out, for
   * replies read by the sender of a message, where a bare "/" would only add noise.
   */
  root?: '/' | 'omit';
}

/** `"/a: message; /b: message"` — every problem with its path, joined by "; ". */
export function formatIssues(issues: readonly PathedIssue[], options: FormatIssuesOptions = {}): string {
  const omitRoot = options.root === 'omit';
  return issues
    .map((issue) => {
      if (issue.path) return `${issue.path}: ${issue.message}`;
      return omitRoot ? issue.message : `/: ${issue.message}`;
    })
    .join('; ');
}
