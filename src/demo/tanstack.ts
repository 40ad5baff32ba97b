/**
 * The demo page's TanStack Table client (browser code): @tanstack/table-core v9 with manual
 * pagination, sorting and filtering, rendered into plain DOM, reading GET <base> (api.ts
 * `apiBase`, `/api/users` by default; docs/api.md "The demo page and static assets", TanStack Table). Its
 * columns and their filter inputs come from the served schema, by kind.
 */
import {
  type ColumnFiltersState,
  type PaginationState,
  type SortingState,
  type Updater,
  columnFacetingFeature,
  columnFilteringFeature,
  constructTable,
  createColumnHelper,
  filterFn_equalsString,
  filterFn_inNumberRange,
  filterFn_includesString,
  functionalUpdate,
  globalFilteringFeature,
  rowPaginationFeature,
  rowSortingFeature,
  tableFeatures,
} from "@tanstack/table-core";
import { storeReactivityBindings } from "@tanstack/table-core/store-reactivity-bindings";
import { type GetRowsBody, type Row, type SchemaBody, type SchemaColumn, apiFetch, cellText, failureText, keyOf, problemOf, saveDownload } from "./api.ts";

/** Page sizes offered by the page-size select, in rows; the first is the initial one. */
export const TANSTACK_PAGE_SIZES = [10, 20, 50, 100] as const;

/**
 * How the client spells the query string:
 * - `encoded`: `URLSearchParams` (brackets as `%5B`/`%5D`, spaces as `+`, commas as `%2C`);
 * - `raw`: hand-built, brackets and commas raw, spaces as `%20`.
 * docs/api.md: the service accepts both.
 */
export type UrlMode = "encoded" | "raw";

/** The table state that makes up one request (TanStack's own state slices). */
export interface TanstackRequestState {
  pagination: PaginationState;
  sorting: SortingState;
  columnFilters: ColumnFiltersState;
  /** The search box's text (TanStack's global filter), sent as `q` (docs/api.md "Global search"); "" for none. */
  globalFilter: string;
}

/** What the test hook (`window.tanstackDemo.snapshot()`) reports: state, last answer, last URL. */
export interface TanstackSnapshot extends TanstackRequestState {
  /** `total` of the last applied response, in rows. */
  total: number;
  /** `table.getPageCount()`: ceil(total / pageSize). */
  pageCount: number;
  /** Rows of the current page, as rendered. */
  rows: Row[];
  /** True while a request is in flight. */
  loading: boolean;
  /** True when nothing is in flight and the rows shown answer the current state (same URL). */
  settled: boolean;
  /** URL of the last applied response (path and query, as sent). */
  url: string;
  /** Requests sent so far. */
  requests: number;
  /** Message of the last failed request, or null. */
  error: string | null;
  urlMode: UrlMode;
  /** Milliseconds the last applied request took, from send to answer. */
  ms: number;
  /** Per faceted column, the values with their counts of the last facets answer (TanStack's `getFacetedUniqueValues`). */
  facets: Record<string, [unknown, number][]>;
}

/** The value a column filter sends (docs/api.md `filter[<col>]`): strings as is, a range `[min,max]` flattened to "min,max". */
function filterParam(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => (v === undefined || v === null ? "" : String(v))).join(",");
  return String(value);
}

/** `encodeURIComponent`, but leaving `,` raw (the "raw" spelling of a range or a list). */
function encodeRawValue(value: string): string {
  return encodeURIComponent(value).replace(/%2C/gi, ",");
}

/**
 * The GET URL for a table state (docs/api.md, TanStack Table):
 * `endpoint?page=<pageIndex+1>&pageSize=<n>[&sortBy=<id>&sortOrder=<asc|desc>][&filter[<col>]=<value>]...`.
 * Only the first sort key is sent (GET has one sort column).
 *
 * @param endpoint path of GET <base>, e.g. "/api/users".
 * @param mode how brackets, spaces and commas are spelled ({@link UrlMode}).
 * @returns a path plus query string.
 */
export function buildListUrl(endpoint: string, state: TanstackRequestState, mode: UrlMode): string {
  const pairs: [string, string][] = [
    ["page", String(state.pagination.pageIndex + 1)],
    ["pageSize", String(state.pagination.pageSize)],
  ];
  const sort = state.sorting[0];
  if (sort !== undefined) {
    pairs.push(["sortBy", sort.id], ["sortOrder", sort.desc ? "desc" : "asc"]);
  }
  pairs.push(...filterPairs(state));
  return spell(endpoint, pairs, mode);
}

/** The `filter[<col>]` and `q` parameters of a table state. */
function filterPairs(state: TanstackRequestState): [string, string][] {
  const pairs: [string, string][] = state.columnFilters.map((filter) => [`filter[${filter.id}]`, filterParam(filter.value)]);
  if (state.globalFilter.trim() !== "") pairs.push(["q", state.globalFilter]);
  return pairs;
}

/** A path with its query string in the chosen spelling. */
function spell(endpoint: string, pairs: [string, string][], mode: UrlMode): string {
  if (mode === "encoded") return `${endpoint}?${new URLSearchParams(pairs).toString()}`;
  return `${endpoint}?${pairs.map(([key, value]) => `${key}=${encodeRawValue(value)}`).join("&")}`;
}

/**
 * The GET <base>/export URL of the table's current view (docs/api.md "Export"): its sort,
 * filters and search, every matching row as CSV.
 */
export function buildExportUrl(endpoint: string, state: TanstackRequestState): string {
  const pairs: [string, string][] = [["format", "csv"]];
  const sort = state.sorting[0];
  if (sort !== undefined) pairs.push(["sortBy", sort.id], ["sortOrder", sort.desc ? "desc" : "asc"]);
  return spell(`${endpoint}/export`, [...pairs, ...filterPairs(state)], "encoded");
}

/**
 * The GET <base>/facets URL for `columns` under the table's filters and search (docs/api.md
 * "Facets": each column's counts leave out its own filter).
 * @param limit values listed per column at most (`facetLimit`, 1…1000)
 */
export function buildFacetsUrl(endpoint: string, state: TanstackRequestState, columns: readonly string[], limit: number): string {
  return spell(`${endpoint}/facets`, [["columns", columns.join(",")], ["facetLimit", String(limit)], ...filterPairs(state)], "encoded");
}


/** The elements of the TanStack section, found by id in index.html. */
interface TanstackElements {
  thead: HTMLTableSectionElement;
  tbody: HTMLTableSectionElement;
  urlModeSelect: HTMLSelectElement;
  pageSizeSelect: HTMLSelectElement;
  firstButton: HTMLButtonElement;
  prevButton: HTMLButtonElement;
  nextButton: HTMLButtonElement;
  lastButton: HTMLButtonElement;
  pageInfo: HTMLElement;
  totalInfo: HTMLElement;
  latencyInfo: HTMLElement;
  urlInfo: HTMLElement;
  exportButton: HTMLButtonElement;
  exportStatus: HTMLElement;
  empty: HTMLElement;
}

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`demo page: #${id} is missing`);
  return element as T;
}

/** Milliseconds a filter box waits after the last keystroke before it applies. */
const FILTER_DEBOUNCE_MS = 300;

/**
 * Per column, the values with counts of the last facets answer: what the table's
 * `facetedUniqueValues` factory returns (TanStack's client-side faceting would count only the
 * page's rows; docs/api.md "Facets" counts every row on the server).
 */
const serverFacets = new Map<string, Map<unknown, number>>();

const features = tableFeatures({
  coreReactivityFeature: storeReactivityBindings(),
  columnFacetingFeature,
  globalFilteringFeature,
  facetedUniqueValues: (_table: unknown, columnId: string) => () => serverFacets.get(columnId) ?? new Map(),
  columnFilteringFeature,
  rowSortingFeature,
  rowPaginationFeature,
  filterFns: { includesString: filterFn_includesString, equalsString: filterFn_equalsString, inNumberRange: filterFn_inNumberRange },
});
const helper = createColumnHelper<typeof features, Row>();

/**
 * What a column's filter box takes, by kind: the GET `filter[col]` form of docs/api.md
 * ("Filtering on any column", "The key") as a placeholder and a longer title. A text key takes
 * whole values, other text columns a substring; enum and boolean columns take a select
 * instead ({@link isFaceted}); json columns no filter.
 */
function filterHint(column: SchemaColumn, isKey: boolean): { placeholder: string; title: string } | null {
  switch (column.kind) {
    case "number":
      return { placeholder: "n or lo,hi", title: "a number, or a range lo,hi (inclusive; either side may be empty)" };
    case "date":
      return { placeholder: "YYYY-MM-DD or lo,hi", title: "a day YYYY-MM-DD, or a range lo,hi of days (inclusive; either side may be empty)" };
    case "datetime":
      return { placeholder: "day or lo,hi", title: "a day YYYY-MM-DD or an ISO 8601 date-time, or a range lo,hi (inclusive; a day covers its whole UTC day)" };
    case "text":
      return isKey ? { placeholder: "value, …", title: "whole values, comma separated (any of them)" } : { placeholder: "contains…", title: "rows whose value contains this text (case and accents ignored)" };
    default:
      return null;
  }
}

/** True for the columns whose filter is a select of values with counts: enum and boolean columns. */
function isFaceted(column: SchemaColumn): boolean {
  return column.kind === "enum" || column.kind === "boolean";
}

/** The values a faceted column's select offers, as the GET filter spells them: an enum's values in order, `true`/`false`. */
function facetOptions(column: SchemaColumn): string[] {
  return column.kind === "boolean" ? ["true", "false"] : (column.values ?? []);
}

/**
 * The table's columns for a snapshot's schema, in schema order: every column by id, json ones
 * neither sortable nor filterable. A header's first click sorts number columns descending and
 * the others ascending, by kind: TanStack's own choice looks at the values on the page, so a
 * column whose first rows are null (nulls sort first) would flip from ascending to off.
 */
function columnsFor(schema: SchemaBody) {
  return helper.columns(
    schema.columns.map((column) =>
      helper.accessor((row: Row) => row[column.id], {
        id: column.id,
        header: column.id,
        filterFn: "includesString",
        sortDescFirst: column.kind === "number",
        enableSorting: column.kind !== "json",
        enableColumnFilter: column.kind !== "json",
      }),
    ),
  );
}

/** The test hook of the TanStack client (`window.tanstackDemo`). */
export interface TanstackHook {
  /** The current state and last answer. */
  snapshot: () => TanstackSnapshot;
  /** Resolves when no request is in flight. */
  idle: () => Promise<void>;
  /** Switches the URL spelling and reloads. */
  setUrlMode: (mode: UrlMode) => void;
  /** Sets the search (TanStack's global filter) and reloads from page 1. */
  setSearch: (text: string) => void;
  /** Clears every column filter (and its box or select) and reloads from page 1. */
  clearFilters: () => void;
  /** Loads the current page again (a change event: docs/api.md "GET /api/users/changes"); resolves when it is shown. */
  reload: () => Promise<void>;
}

/**
 * Mounts the TanStack table into the elements of index.html's TanStack section and loads page 1.
 * Sorting or filtering goes back to page 1; a response that a newer request superseded is dropped.
 *
 * @param endpoint path of GET <base> (api.ts `apiBase`).
 * @param initialMode the URL spelling to start with ({@link UrlMode}).
 * @param schema the served schema (GET <base>/schema): one table column per schema column, in
 *   its order, and under each header the filter of its kind (a select of values fed by the
 *   facets endpoint for enum and boolean columns, a box for the others but json ones)
 * @returns the test hook.
 * @throws Error when an element of index.html's TanStack section (`#ts-…`) is missing.
 */
export function mountTanstack(endpoint: string, initialMode: UrlMode, schema: SchemaBody): TanstackHook {
  const key = keyOf(schema);
  const columns = columnsFor(schema);
  const specOf = new Map(schema.columns.map((c) => [c.id, c]));
  const el: TanstackElements = {
    thead: byId("ts-thead"),
    tbody: byId("ts-tbody"),
    urlModeSelect: byId("ts-url-mode"),
    pageSizeSelect: byId("ts-page-size"),
    firstButton: byId("ts-first"),
    prevButton: byId("ts-prev"),
    nextButton: byId("ts-next"),
    lastButton: byId("ts-last"),
    pageInfo: byId("ts-page-info"),
    totalInfo: byId("ts-total"),
    latencyInfo: byId("ts-latency"),
    urlInfo: byId("ts-url"),
    exportButton: byId("ts-export"),
    exportStatus: byId("ts-export-status"),
    empty: byId("ts-empty"),
  };
  const facetedColumns = schema.columns.filter(isFaceted);
  /** Values listed per faceted column: every value a select offers (`facetLimit` is 1…1000). */
  const facetLimit = Math.min(1000, Math.max(20, ...facetedColumns.map((c) => facetOptions(c).length)));
  /** The filter control under each filterable column's header, by column id. */
  const controls = new Map<string, HTMLInputElement | HTMLSelectElement>();

  let state: TanstackRequestState = {
    pagination: { pageIndex: 0, pageSize: TANSTACK_PAGE_SIZES[0] },
    sorting: [],
    columnFilters: [],
    globalFilter: "",
  };
  let ms = 0;
  let facetsRequest = 0;
  let urlMode: UrlMode = initialMode;
  let data: Row[] = [];
  let total = 0;
  let appliedUrl = "";
  let lastError: string | null = null;
  let requests = 0;
  let sequence = 0;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const table = constructTable({
    features,
    columns,
    data,
    rowCount: 0,
    manualPagination: true,
    manualSorting: true,
    manualFiltering: true,
    enableMultiSort: false,
    getRowId: (row) => String(row[key]),
    state: { ...state },
    onPaginationChange: (updater: Updater<PaginationState>) => update({ pagination: functionalUpdate(updater, state.pagination) }),
    onSortingChange: (updater: Updater<SortingState>) =>
      update({ sorting: functionalUpdate(updater, state.sorting), pagination: { ...state.pagination, pageIndex: 0 } }),
    onColumnFiltersChange: (updater: Updater<ColumnFiltersState>) =>
      update({ columnFilters: functionalUpdate(updater, state.columnFilters), pagination: { ...state.pagination, pageIndex: 0 } }),
    onGlobalFilterChange: (updater: Updater<string>) =>
      update({ globalFilter: functionalUpdate(updater, state.globalFilter) ?? "", pagination: { ...state.pagination, pageIndex: 0 } }),
  });

  /** Asks the server for the faceted columns' values under the current filters, then shows them. */
  function loadFacets(): void {
    if (facetedColumns.length === 0) return;
    const mine = ++facetsRequest;
    apiFetch(buildFacetsUrl(endpoint, state, facetedColumns.map((c) => c.id), facetLimit))
      .then(async (response) => {
        if (!response.ok || mine !== facetsRequest) return;
        const body = (await response.json()) as { facets: Record<string, { values?: { value: unknown; count: number }[] }> };
        for (const [id, facet] of Object.entries(body.facets)) serverFacets.set(id, new Map((facet.values ?? []).map((v) => [v.value, v.count])));
        renderFacets();
      })
      .catch(() => {});
  }

  /** Each faceted select's options: "any", then every value with its count (TanStack's `getFacetedUniqueValues`). */
  function renderFacets(): void {
    for (const column of facetedColumns) {
      const select = controls.get(column.id);
      if (!(select instanceof HTMLSelectElement)) continue;
      const counts = table.getColumn(column.id)?.getFacetedUniqueValues() ?? new Map<unknown, number>();
      const current = select.value;
      const options = [new Option("any", "")];
      for (const value of facetOptions(column)) {
        const count = counts.get(column.kind === "boolean" ? value === "true" : value) ?? 0;
        const option = new Option(`${value} (${count.toLocaleString("en")})`, value);
        option.dataset.count = String(count);
        options.push(option);
      }
      select.replaceChildren(...options);
      select.value = current;
    }
  }

  function update(next: Partial<TanstackRequestState>): void {
    state = { ...state, ...next };
    table.setOptions((prev) => ({ ...prev, state: { ...state } }));
    load();
  }

  /** Marks the filter controls the server refused (`filter[<col>]` in the problem's `errors`), clears the others. */
  function markRefused(errors: { parameter?: string; detail: string }[]): void {
    for (const [id, control] of controls) {
      const refusal = errors.find((e) => e.parameter === `filter[${id}]`);
      if (refusal === undefined) {
        control.removeAttribute("aria-invalid");
        control.title = control.dataset.hint ?? "";
      } else {
        control.setAttribute("aria-invalid", "true");
        control.title = refusal.detail;
      }
    }
  }

  function load(): void {
    const url = buildListUrl(endpoint, state, urlMode);
    const mine = ++sequence;
    requests++;
    inFlight++;
    render();
    loadFacets();
    const started = performance.now();
    apiFetch(url)
      .then(async (response) => {
        if (!response.ok) {
          const problem = await problemOf(response);
          if (mine === sequence) markRefused(problem.errors ?? []);
          throw new Error(failureText(response.status, problem));
        }
        const body = (await response.json()) as GetRowsBody;
        if (mine !== sequence) return;
        ms = performance.now() - started;
        data = body.data;
        total = body.total;
        appliedUrl = url;
        lastError = null;
        markRefused([]);
        table.setOptions((prev) => ({ ...prev, data, rowCount: total }));
      })
      .catch((error: Error) => {
        if (mine === sequence) lastError = error.message;
      })
      .finally(() => {
        inFlight--;
        render();
        if (inFlight === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const resolve of waiters) resolve();
        }
      });
  }

  function render(): void {
    const headerCells: HTMLTableCellElement[] = [];
    for (const header of table.getHeaderGroups()[0].headers) {
      const th = document.createElement("th");
      const column = header.column;
      const spec = specOf.get(column.id);
      const sorted = column.getIsSorted();
      th.textContent = String(column.columnDef.header ?? column.id);
      th.dataset.column = column.id;
      th.title = spec === undefined ? column.id : `${column.id} · ${spec.kind}${column.id === key ? " · key" : ""}`;
      if (column.getCanSort()) {
        th.className = "sortable";
        th.setAttribute("aria-sort", sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none");
        const arrow = document.createElement("span");
        arrow.className = "sort-arrow";
        arrow.textContent = sorted === "asc" ? " ▲" : sorted === "desc" ? " ▼" : "";
        th.append(arrow);
        th.addEventListener("click", (event) => column.getToggleSortingHandler()?.(event));
      }
      headerCells.push(th);
    }
    // only the header cells are replaced: the filter row stays in place, so a box being typed in keeps its focus
    headerRow.replaceChildren(...headerCells);

    const body = document.createDocumentFragment();
    for (const row of table.getRowModel().rows) {
      const tr = document.createElement("tr");
      for (const cell of row.getAllCells()) {
        const td = document.createElement("td");
        const value = cell.getValue();
        const spec = specOf.get(cell.column.id);
        td.textContent = spec === undefined ? String(value) : cellText(spec, value);
        td.dataset.column = cell.column.id;
        if (spec !== undefined) td.className = `kind-${spec.kind}`;
        tr.append(td);
      }
      body.append(tr);
    }
    el.tbody.replaceChildren(body);

    const pageCount = table.getPageCount();
    el.pageInfo.textContent = `Page ${pageCount === 0 ? 0 : state.pagination.pageIndex + 1} of ${pageCount}`;
    el.totalInfo.textContent = `${total.toLocaleString("en")} total`;
    el.latencyInfo.textContent = appliedUrl === "" ? "" : `${Math.round(ms)} ms`;
    el.empty.hidden = !(inFlight === 0 && appliedUrl !== "" && total === 0 && lastError === null);
    el.urlInfo.textContent = lastError !== null ? `error: ${lastError}` : appliedUrl;
    el.urlInfo.classList.toggle("error", lastError !== null);
    el.firstButton.disabled = !table.getCanPreviousPage();
    el.prevButton.disabled = !table.getCanPreviousPage();
    el.nextButton.disabled = !table.getCanNextPage();
    el.lastButton.disabled = !table.getCanNextPage();
    el.pageSizeSelect.value = String(state.pagination.pageSize);
    document.body.classList.toggle("ts-loading", inFlight > 0);
  }

  /** Sets column `id`'s filter value (undefined clears it): TanStack's state, then a request. */
  const setFilter = (id: string, value: string | undefined) => table.getColumn(id)?.setFilterValue(value);

  // Under each header the filter of its column's kind (docs/api.md "Filter model").
  const headerRow = document.createElement("tr");
  const filterRow = document.createElement("tr");
  filterRow.className = "filter-row";
  for (const column of schema.columns) {
    const th = document.createElement("th");
    const hint = filterHint(column, column.id === key);
    if (isFaceted(column)) {
      const select = document.createElement("select");
      select.dataset.filter = column.id;
      select.setAttribute("aria-label", `filter ${column.id}`);
      select.add(new Option("any", ""));
      for (const value of facetOptions(column)) select.add(new Option(value, value));
      select.addEventListener("change", () => setFilter(column.id, select.value === "" ? undefined : select.value));
      controls.set(column.id, select);
      th.append(select);
    } else if (hint !== null) {
      const input = document.createElement("input");
      input.type = "search";
      input.placeholder = hint.placeholder;
      input.title = hint.title;
      input.dataset.hint = hint.title;
      input.dataset.filter = column.id;
      input.autocomplete = "off";
      input.spellcheck = false;
      input.setAttribute("aria-label", `filter ${column.id}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      input.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => setFilter(column.id, input.value.trim() === "" ? undefined : input.value), FILTER_DEBOUNCE_MS);
      });
      controls.set(column.id, input);
      th.append(input);
    }
    filterRow.append(th);
  }

  el.thead.replaceChildren(headerRow, filterRow);

  // Controls → TanStack state.
  for (const size of TANSTACK_PAGE_SIZES) el.pageSizeSelect.add(new Option(String(size), String(size)));
  el.pageSizeSelect.addEventListener("change", () => table.setPageSize(Number(el.pageSizeSelect.value)));
  el.firstButton.addEventListener("click", () => table.firstPage());
  el.prevButton.addEventListener("click", () => table.previousPage());
  el.nextButton.addEventListener("click", () => table.nextPage());
  el.lastButton.addEventListener("click", () => table.lastPage());
  el.urlModeSelect.value = urlMode;
  el.urlModeSelect.addEventListener("change", () => {
    urlMode = el.urlModeSelect.value === "raw" ? "raw" : "encoded";
    load();
  });
  el.exportButton.addEventListener("click", () => {
    el.exportButton.disabled = true;
    el.exportStatus.textContent = "exporting…";
    apiFetch(buildExportUrl(endpoint, state))
      .then((response) => saveDownload(response, "export.csv"))
      .then((bytes) => {
        el.exportStatus.textContent = `saved ${(bytes / 1024).toLocaleString("en", { maximumFractionDigits: 0 })} KiB`;
      })
      .catch((error: Error) => {
        el.exportStatus.textContent = error.message;
      })
      .finally(() => {
        el.exportButton.disabled = false;
      });
  });

  load();

  return {
    snapshot: () => ({
      ...state,
      total,
      pageCount: table.getPageCount(),
      rows: data.map((row) => ({ ...row })),
      loading: inFlight > 0,
      settled: inFlight === 0 && appliedUrl === buildListUrl(endpoint, state, urlMode),
      url: appliedUrl,
      requests,
      error: lastError,
      urlMode,
      ms,
      facets: Object.fromEntries([...serverFacets].map(([id, counts]) => [id, [...counts]])),
    }),
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    reload: () => {
      load();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    setUrlMode: (mode: UrlMode) => {
      urlMode = mode;
      el.urlModeSelect.value = mode;
      load();
    },
    setSearch: (text: string) => table.setGlobalFilter(text),
    clearFilters: () => {
      for (const control of controls.values()) control.value = "";
      table.resetColumnFilters(true);
    },
  };
}
