// One error body for every HTTP failure: the status code and every problem, each with its path.
import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ValidationIssue } from '../protocol/types.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  problems: ValidationIssue[];
}

export function errorBody(statusCode: number, message: string, problems: ValidationIssue[] = []): ErrorBody {
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    problems: problems.length > 0 ? problems : [{ path: '', message }],
  };
}

export function sendError(reply: FastifyReply, statusCode: number, message: string, problems: ValidationIssue[] = []): FastifyReply {
  return reply.code(statusCode).send(errorBody(statusCode, message, problems));
}
