/**
 * Entry of the demo page's browser bundle (index.html): mounts the AG Grid and TanStack Table
 * clients and exposes test hooks on `window`:
 * - `window.gridApi`: the AG Grid api (GridApi<UserRow>);
 * - `window.agRequests`: every POST /api/users the grid sent ({@link AgRequestRecord}), in completion order;
 * - `window.tanstackDemo`: the TanStack hook ({@link TanstackHook}).
 * The page's query string may carry `tsUrl=raw` (or `encoded`, the default) to pick the
 * TanStack URL spelling. The search box drives both clients (docs/api.md "Global search": AG
 * Grid's `quickFilter`, TanStack's global filter as `q`).
 */
import type { GridApi } from "ag-grid-community";
import { type AgRequestRecord, exportAgView, mountAgGrid } from "./ag-grid.ts";
import type { SchemaBody, UserRow } from "./api.ts";
import { type TanstackHook, type UrlMode, mountTanstack } from "./tanstack.ts";

/** The endpoint both clients read (docs/api.md). */
const ENDPOINT = "/api/users";

declare global {
  interface Window {
    gridApi: GridApi<UserRow>;
    agRequests: AgRequestRecord[];
    tanstackDemo: TanstackHook;
  }
}

/** Milliseconds the search box waits after the last keystroke before it applies. */
const SEARCH_DEBOUNCE_MS = 300;

/** Loads the served snapshot's columns (GET /api/users/schema), then mounts both clients with them. */
async function start(): Promise<void> {
  const response = await fetch(`${ENDPOINT}/schema`);
  const agStatus = document.getElementById("ag-status");
  if (!response.ok) {
    if (agStatus !== null) agStatus.textContent = `the schema could not be loaded (HTTP ${response.status})`;
    return;
  }
  const { columns } = (await response.json()) as SchemaBody;
  window.agRequests = [];
  const searchInput = document.getElementById("search") as HTMLInputElement;
  let search = "";
  const agEmpty = document.getElementById("ag-empty");
  const gridElement = document.getElementById("ag-grid");
  if (gridElement === null) throw new Error("demo page: #ag-grid is missing");
  window.gridApi = mountAgGrid(
    gridElement,
    ENDPOINT,
    (record) => {
    window.agRequests.push(record);
    if (agStatus !== null) {
      const { startRow, endRow } = record.body;
      const requests = window.agRequests.length;
      agStatus.textContent =
        record.status === 200
          ? `rows ${startRow}–${endRow - 1} of ${record.total?.toLocaleString("en")} matching · ${Math.round(record.ms)} ms · ${requests} request${requests === 1 ? "" : "s"} so far`
          : `request for rows ${startRow}–${endRow - 1} failed (HTTP ${record.status})`;
    }
    if (agEmpty !== null && record.status === 200 && record.body.startRow === 0) agEmpty.hidden = record.total !== 0;
    },
    columns,
    () => search,
  );
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
      window.tanstackDemo.setSearch("");
    });
  }
  const agExport = document.getElementById("ag-export") as HTMLButtonElement | null;
  agExport?.addEventListener("click", () => {
    agExport.disabled = true;
    const status = document.getElementById("ag-export-status");
    exportAgView(window.gridApi, ENDPOINT, window.agRequests.at(-1)?.body.sortModel ?? [], search)
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
  window.tanstackDemo = mountTanstack(ENDPOINT, mode, columns);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void start());
else void start();
