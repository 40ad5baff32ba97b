/**
 * The service's logger: pino, JSON lines on stderr (level from LOG_LEVEL, default info), written
 * synchronously: the server logs a few lines per event (start, reload, drain, errors), never per
 * request, and a synchronous write cannot be lost when the process exits right after it (an
 * asynchronous one still in the thread pool is).
 */
import pino from "pino";

/** Creates the process logger. */
export function createLogger(): pino.Logger {
  return pino({ level: process.env.LOG_LEVEL ?? "info", base: { service: "users-listing" } }, pino.destination({ dest: 2, sync: true }));
}
