import type { ValidationIssue } from '../protocol/types.js';
import { formatIssues } from '../kit/format-issues.js';

/** Thrown by connectPlugin when the descriptor, the handlers or the Core refuse the plugin. */
export class PluginRegistrationError extends Error {
  constructor(
    message: string,
    readonly errors: ValidationIssue[],
  ) {
    super(errors.length > 0 ? `${message}: ${formatIssues(errors)}` : message);
    this.name = 'PluginRegistrationError';
  }
}
