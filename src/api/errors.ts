// One error body for every HTTP failure: the status code and every problem, each with its path.
import type { FastifyReply } from 'fastify';
import type { ValidationIssue } from '../protocol/types.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  problems: ValidationIssue[];
}

const NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  428: 'Precondition Required',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
};

export function errorBody(statusCode: number, message: string, problems: ValidationIssue[] = []): ErrorBody {
  return {
    statusCode,
    error: NAMES[statusCode] ?? 'Error',
    message,
    problems: problems.length > 0 ? problems : [{ path: '', message }],
  };
}

export function sendError(reply: FastifyReply, statusCode: number, message: string, problems: ValidationIssue[] = []): FastifyReply {
  return reply.code(statusCode).send(errorBody(statusCode, message, problems));
}
