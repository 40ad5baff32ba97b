/** The service's logger: pino, JSON lines on stderr (level from LOG_LEVEL, default info). */
import pino from "pino";

/** Creates the process logger. */
export function createLogger(): pino.Logger {
  return pino({ level: process.env.LOG_LEVEL ?? "info", base: { service: "users-listing" } }, pino.destination(2));
}
