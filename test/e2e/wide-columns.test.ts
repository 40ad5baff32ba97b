/**
 * End to end over a wide snapshot (docs/api.md "Columns beyond the four"; src/generate/wide.ts):
 * the demo page reads the served columns from GET /api/users/schema and both clients show every
 * column with the filter of its kind; a sort and a filter per kind through each client are
 * checked against the naive oracle on the same records (test/e2e/support/every-kind.ts).
 *
 * Needs /usr/bin/chromium: `sh scripts/install-chromium.sh` (as root).
 */
import { everyKindSuite } from "./support/every-kind.ts";
import { startWideDemoService } from "./support/fixture.ts";

everyKindSuite("a wide table", () => startWideDemoService(5000, 11));
