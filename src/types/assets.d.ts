/** Files imported `with { type: "file" }`: Bun gives their path (embedded in a compiled binary). */
declare module "*/@scalar/api-reference/dist/browser/standalone.js" {
  /** Path of the Scalar API reference browser bundle. */
  const path: string;
  export default path;
}
