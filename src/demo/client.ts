/**
 * Entry of the demo page's browser bundle (index.html): finds the API (api.ts `apiBase`: the
 * `data-api-base` attribute of `<html>`, `/api/users` by default), reads the served schema
 * (GET <base>/schema), mounts the AG Grid and TanStack Table clients with its columns, and
 * exposes test hooks on `window`:
 * - `window.gridApi`: the AG Grid api (GridApi<Row>);
 * - `window.agRequests`: every POST <base> the grid sent ({@link AgRequestRecord}), in completion order;
 * - `window.tanstackDemo`: the TanStack hook ({@link TanstackHook});
 * - `window.demoSchema`: the schema the page mounted with, or null until then;
 * - `window.demoChanges`: every change event received (live.ts), in order.
 * Both clients refresh themselves on each change event (docs/api.md "GET /api/users/changes"):
 * AG Grid's cache (`refreshInfiniteCache`: its loaded blocks asked again) and TanStack's current
 * page, at most one refresh of each at a time. The server sends a role only changes of rows it
 * may see, and any of them (an insert) may belong in the rows shown, so every event refreshes.
 * The page's query string may carry `tsUrl=raw` (or `encoded`, the default) to pick the
 * TanStack URL spelling. The search box drives both clients (docs/api.md "Global search": AG
 * Grid's `quickFilter`, TanStack's global filter as `q`). The Authorization field holds a key or
 * token that every API request sends as `Authorization: Bearer <it>` (docs/api.md "HTTP
 * envelope", API keys), kept in sessionStorage for the tab; changing it reloads the page, since
 * the columns a credential sees may differ.
 */
import type { GridApi } from "ag-grid-community";
import { type AgRequestRecord, exportAgView, mountAgGrid } from "./ag-grid.ts";
import { type Row, type SchemaBody, apiBase, apiFetch, currentCredential, failureText, problemOf, setCredential } from "./api.ts";
import { type ChangeEvent, coalesced, subscribeChanges } from "./live.ts";
import { type TanstackHook, type UrlMode, mountTanstack } from "./tanstack.ts";

declare global {
  interface Window {
    gridApi: GridApi<Row>;
    agRequests: AgRequestRecord[];
    tanstackDemo: TanstackHook;
    demoSchema: SchemaBody | null;
    demoChanges: ChangeEvent[];
  }
}

/** Milliseconds the search box waits after the last keystroke before it applies. */
const SEARCH_DEBOUNCE_MS = 300;

/** Shows `text` where both clients report their state (the page could not load its schema). */
function reportFailure(text: string): void {
  for (const id of ["ag-status", "ts-url"]) {
    const element = document.getElementById(id);
    if (element === null) continue;
    element.textContent = text;
    element.classList.add("error");
  }
}

/**
 * The Authorization field: shows whether a credential is set, and on submit remembers the new
 * one (api.ts `setCredential`) and reloads the page with it.
 * @param refused true when the API refused the credential (401, or 403: a role it does not
 *   know or a claim the role needs): the field is marked and focused
 */
function wireCredentialField(refused: boolean): void {
  const form = document.getElementById("auth-form") as HTMLFormElement | null;
  const input = document.getElementById("auth-token") as HTMLInputElement | null;
  if (form === null || input === null) return;
  input.value = currentCredential();
  form.classList.toggle("refused", refused);
  if (refused) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    setCredential(input.value);
    location.reload();
  });
}

/** Loads the served schema, then mounts both clients with it. */
async function start(): Promise<void> {
  const base = apiBase();
  window.demoSchema = null;
  document.querySelectorAll(".api-base").forEach((element) => {
    element.textContent = base;
  });
  let response: Response;
  try {
    response = await apiFetch(`${base}/schema`);
  } catch (error) {
    wireCredentialField(false);
    reportFailure(`could not load the columns from ${base}/schema: ${(error as Error).message}`);
    return;
  }
  wireCredentialField(response.status === 401 || response.status === 403);
  if (!response.ok) {
    reportFailure(`could not load the columns from ${base}/schema (${failureText(response.status, await problemOf(response))})`);
    return;
  }
  const schema = (await response.json()) as SchemaBody;
  window.demoSchema = schema;
  window.agRequests = [];
  const searchInput = document.getElementById("search") as HTMLInputElement;
  let search = "";
  const agStatus = document.getElementById("ag-status");
  const agEmpty = document.getElementById("ag-empty");
  const gridElement = document.getElementById("ag-grid");
  if (gridElement === null) throw new Error("demo page: #ag-grid is missing");
  const onAgRequest = (record: AgRequestRecord) => {
    window.agRequests.push(record);
    if (agStatus !== null) {
      const { startRow, endRow } = record.body;
      const requests = window.agRequests.length;
      agStatus.textContent =
        record.status === 200
          ? `rows ${startRow}–${endRow - 1} of ${record.total?.toLocaleString("en")} matching · ${Math.round(record.ms)} ms · ${requests} request${requests === 1 ? "" : "s"} so far`
          : `request for rows ${startRow}–${endRow - 1} failed (${record.error ?? `HTTP ${record.status}`})`;
      agStatus.classList.toggle("error", record.status !== 200);
    }
    if (agEmpty !== null && record.status === 200 && record.body.startRow === 0) agEmpty.hidden = record.total !== 0;
  };
  window.gridApi = mountAgGrid(gridElement, base, onAgRequest, schema, () => search);
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  searchInput.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      if (searchInput.value === search) return;
      search = searchInput.value;
      window.gridApi.purgeInfiniteCache();
      window.tanstackDemo.setSearch(search);
    }, SEARCH_DEBOUNCE_MS);
  });
  document.getElementById("search-bar")?.addEventListener("submit", (event) => event.preventDefault());
  for (const id of ["ag-clear", "ts-clear"]) {
    document.getElementById(id)?.addEventListener("click", () => {
      searchInput.value = "";
      search = "";
      window.gridApi.setFilterModel(null);
      window.gridApi.purgeInfiniteCache();
      window.tanstackDemo.clearFilters();
      window.tanstackDemo.setSearch("");
    });
  }
  const agExport = document.getElementById("ag-export") as HTMLButtonElement | null;
  agExport?.addEventListener("click", () => {
    agExport.disabled = true;
    const status = document.getElementById("ag-export-status");
    if (status !== null) status.textContent = "exporting…";
    exportAgView(window.gridApi, base, window.agRequests.at(-1)?.body.sortModel ?? [], search)
      .then((bytes) => {
        if (status !== null) status.textContent = `saved ${(bytes / 1024).toLocaleString("en", { maximumFractionDigits: 0 })} KiB`;
      })
      .catch((error: Error) => {
        if (status !== null) status.textContent = error.message;
      })
      .finally(() => {
        agExport.disabled = false;
      });
  });
  // The filters apply as they change; Enter in a field must not submit (reload) the page. A
  // listener, not an inline handler: the page's Content-Security-Policy allows no inline script.
  document.getElementById("ts-toolbar")?.addEventListener("submit", (event) => event.preventDefault());
  const mode: UrlMode = new URLSearchParams(location.search).get("tsUrl") === "raw" ? "raw" : "encoded";
  window.tanstackDemo = mountTanstack(base, mode, schema);
  window.demoChanges = [];
  const refreshGrid = coalesced(async () => window.gridApi.refreshInfiniteCache());
  const refreshPage = coalesced(() => window.tanstackDemo.reload());
  subscribeChanges(base, (change) => {
    window.demoChanges.push(change);
    refreshGrid();
    refreshPage();
  });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void start());
else void start();
