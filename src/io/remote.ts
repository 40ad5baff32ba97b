/**
 * A location's storage with every operation on an I/O thread (io/threads.ts) under a time limit:
 * what the server and `snapshot publish` use, so that a hung mount or S3 endpoint ends in an
 * IoError `timeout` naming the operation and the location instead of a wait without end.
 */
import type { FileThreads } from "./threads.ts";
import { type ObjectStorage, describeLocation } from "./storage.ts";

/** The storage operations that publishing and following use (every one but the local download). */
export type StorageOps = Omit<ObjectStorage, "download">;

/**
 * The storage of `location` run on `threads`, each operation abandoned after `timeoutMs`
 * without progress.
 */
export function threadedStorage(threads: FileThreads, location: string, timeoutMs: number): StorageOps {
  const description = describeLocation(location);
  const on = (what: string) => ({ timeoutMs, label: `${what} ${description}` });
  return {
    location,
    description,
    read: (key) => threads.run({ kind: "read", location, key }, on(`reading ${key} from`)),
    size: (key) => threads.run({ kind: "size", location, key }, on(`reading the size of ${key} in`)),
    list: (prefix) => threads.run({ kind: "list", location, prefix }, on(`listing ${prefix}/ in`)),
    remove: async (key) => {
      await threads.run({ kind: "remove", location, key }, on(`removing ${key} from`));
    },
    replace: async (key, bytes) => {
      await threads.run({ kind: "replace", location, key, bytes }, on(`writing ${key} to`));
    },
    upload: async (key, file) => {
      await threads.run({ kind: "upload", location, key, file }, on(`uploading ${file} as ${key} to`));
    },
    digest: (key) => threads.run({ kind: "digest", location, key }, on(`reading back ${key} from`)),
  };
}
