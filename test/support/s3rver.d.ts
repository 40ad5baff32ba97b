/** s3rver ships no types: the part the tests use (a fake S3 server on loopback). */
declare module "s3rver" {
  export default class S3rver {
    constructor(options: { port: number; address: string; silent: boolean; directory: string; configureBuckets: { name: string; configs: unknown[] }[] });
    run(): Promise<{ port: number }>;
    close(): Promise<void>;
  }
}
