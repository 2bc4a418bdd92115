// Runs a load at most once at a time; a request made while one runs starts one more after it, so the
// last answer shown was asked for after the last change that triggered a load.
export function serialLoader(load: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    running = true;
    do {
      again = false;
      try {
        await load();
      } catch {
        // The page shows its own error; the next trigger tries again.
      }
    } while (again);
    running = false;
  };
  return () => {
    if (running) again = true;
    else void run();
  };
}
