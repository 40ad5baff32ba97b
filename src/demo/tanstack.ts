/**
 * The demo page's TanStack Table client (browser code): @tanstack/table-core v9 with manual
 * pagination, sorting and filtering, rendered into plain DOM, reading GET /api/users
 * (docs/api.md "The two real clients", TanStack Table).
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
import { type GetUsersBody, type SchemaColumn, type UserRow, cellText } from "./api.ts";

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
  rows: UserRow[];
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

/** The value a column filter sends (docs/api.md `filter[<col>]`): strings as is, an id range `[min,max]` flattened to "min,max". */
function filterParam(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => (v === undefined || v === null ? "" : String(v))).join(",");
  return String(value);
}

/** `encodeURIComponent`, but leaving `,` raw (the "raw" spelling of an id range). */
function encodeRawValue(value: string): string {
  return encodeURIComponent(value).replace(/%2C/gi, ",");
}

/**
 * The GET URL for a table state (docs/api.md, TanStack Table):
 * `endpoint?page=<pageIndex+1>&pageSize=<n>[&sortBy=<id>&sortOrder=<asc|desc>][&filter[<col>]=<value>]...`.
 * Only the first sort key is sent (GET has one sort column).
 *
 * @param endpoint path of GET /api/users, e.g. "/api/users".
 * @param mode how brackets, spaces and commas are spelled ({@link UrlMode}).
 * @returns a path plus query string.
 */
export function buildUsersUrl(endpoint: string, state: TanstackRequestState, mode: UrlMode): string {
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
 * The GET /api/users/export URL of the table's current view (docs/api.md "Export"): its sort,
 * filters and search, every matching row as CSV.
 */
export function buildExportUrl(endpoint: string, state: TanstackRequestState): string {
  const pairs: [string, string][] = [["format", "csv"]];
  const sort = state.sorting[0];
  if (sort !== undefined) pairs.push(["sortBy", sort.id], ["sortOrder", sort.desc ? "desc" : "asc"]);
  return spell(`${endpoint}/export`, [...pairs, ...filterPairs(state)], "encoded");
}

/**
 * The GET /api/users/facets URL for `columns` under the table's filters and search (docs/api.md
 * "Facets": each column's counts leave out its own filter).
 */
export function buildFacetsUrl(endpoint: string, state: TanstackRequestState, columns: readonly string[]): string {
  return spell(`${endpoint}/facets`, [["columns", columns.join(",")], ["facetLimit", "50"], ...filterPairs(state)], "encoded");
}

/** The elements of the TanStack section, found by id in index.html. */
interface TanstackElements {
  thead: HTMLTableSectionElement;
  tbody: HTMLTableSectionElement;
  nameInput: HTMLInputElement;
  statusSelect: HTMLSelectElement;
  idMinInput: HTMLInputElement;
  idMaxInput: HTMLInputElement;
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
  exportLink: HTMLAnchorElement;
  empty: HTMLElement;
}

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`demo page: #${id} is missing`);
  return element as T;
}

/** Milliseconds the name and id filters wait after the last keystroke before they apply. */
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
const helper = createColumnHelper<typeof features, UserRow>();
const SEED_COLUMNS = {
  id: helper.accessor("id", { header: "ID", filterFn: "inNumberRange" }),
  name: helper.accessor("name", { header: "Name", filterFn: "includesString" }),
  email: helper.accessor("email", { header: "Email", filterFn: "includesString", enableColumnFilter: false }),
  status: helper.accessor("status", { header: "Status", filterFn: "equalsString" }),
} as const;

/** The seed's columns as one list: the column type the table is constructed with. */
const seedColumnList = helper.columns([SEED_COLUMNS.id, SEED_COLUMNS.name, SEED_COLUMNS.email, SEED_COLUMNS.status]);

/** What an added column's filter box takes: the GET `filter[col]` form of its kind (docs/api.md "Filtering on any column"). */
const FILTER_HINTS: Record<SchemaColumn["kind"], string | null> = {
  number: "v or lo,hi",
  date: "YYYY-MM-DD or lo,hi",
  datetime: "date or lo,hi",
  enum: "value, …",
  boolean: "true / false",
  text: "contains…",
  json: null,
};

/** True for the columns whose filter is a select of values with counts: `status`, enum and boolean columns. */
function isFaceted(column: SchemaColumn): boolean {
  return column.kind === "enum" || column.kind === "boolean";
}

/** The table's columns for a snapshot's schema: the seed's four as always, then the added ones (json ones not sortable). */
function columnsFor(schema: readonly SchemaColumn[]) {
  return schema.map((column) => {
    const seed = SEED_COLUMNS[column.id as keyof typeof SEED_COLUMNS];
    if (seed !== undefined) return seed;
    return helper.accessor((row: UserRow) => row[column.id], {
      id: column.id,
      header: column.id,
      filterFn: "includesString",
      enableSorting: column.kind !== "json",
      enableColumnFilter: column.kind !== "json",
    });
  });
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
}

/**
 * Mounts the TanStack table into the elements of index.html's TanStack section and loads page 1.
 * Sorting or filtering goes back to page 1; a response that a newer request superseded is dropped.
 *
 * @param endpoint path of GET /api/users.
 * @param initialMode the URL spelling to start with ({@link UrlMode}).
 * @param schema the served snapshot's columns (GET /api/users/schema): one table column each,
 *   and a filter box under the header of each added column but json ones
 * @returns the test hook.
 * @throws Error when an element of index.html's TanStack section (`#ts-…`) is missing.
 */
export function mountTanstack(endpoint: string, initialMode: UrlMode, schema: readonly SchemaColumn[]): TanstackHook {
  const columns = columnsFor(schema);
  const specOf = new Map(schema.map((c) => [c.id, c]));
  const el: TanstackElements = {
    thead: byId("ts-thead"),
    tbody: byId("ts-tbody"),
    nameInput: byId("ts-filter-name"),
    statusSelect: byId("ts-filter-status"),
    idMinInput: byId("ts-filter-id-min"),
    idMaxInput: byId("ts-filter-id-max"),
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
    exportLink: byId("ts-export"),
    empty: byId("ts-empty"),
  };
  const facetedColumns = schema.filter(isFaceted).map((c) => c.id);
  /** The selects of the faceted columns: the toolbar's status select, a select under each other faceted header. */
  const facetSelects = new Map<string, HTMLSelectElement>([["status", el.statusSelect]]);

  let state: TanstackRequestState = {
    pagination: { pageIndex: 0, pageSize: TANSTACK_PAGE_SIZES[0] },
    sorting: [],
    columnFilters: [],
    globalFilter: "",
  };
  let ms = 0;
  let facetsRequest = 0;
  let urlMode: UrlMode = initialMode;
  let data: UserRow[] = [];
  let total = 0;
  let appliedUrl = "";
  let lastError: string | null = null;
  let requests = 0;
  let sequence = 0;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const table = constructTable({
    features,
    // the seed's accessors are typed by field, the added ones by id: one column list for the table
    columns: columns as unknown as typeof seedColumnList,
    data,
    rowCount: 0,
    manualPagination: true,
    manualSorting: true,
    manualFiltering: true,
    enableMultiSort: false,
    getRowId: (row) => String(row.id),
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
    fetch(buildFacetsUrl(endpoint, state, facetedColumns))
      .then(async (response) => {
        if (!response.ok || mine !== facetsRequest) return;
        const body = (await response.json()) as { facets: Record<string, { values: { value: unknown; count: number }[] }> };
        for (const [id, facet] of Object.entries(body.facets)) serverFacets.set(id, new Map(facet.values.map((v) => [v.value, v.count])));
        renderFacets();
      })
      .catch(() => {});
  }

  /** Each faceted select's options: "any", then every value with its count (TanStack's `getFacetedUniqueValues`). */
  function renderFacets(): void {
    for (const [id, select] of facetSelects) {
      const counts = table.getColumn(id)?.getFacetedUniqueValues() ?? new Map<unknown, number>();
      const spec = specOf.get(id);
      const current = select.value;
      const values = spec?.kind === "boolean" ? ["true", "false"] : (spec?.values ?? []);
      const options = [new Option("any", "")];
      for (const value of values) {
        const count = counts.get(spec?.kind === "boolean" ? value === "true" : value) ?? 0;
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

  function load(): void {
    const url = buildUsersUrl(endpoint, state, urlMode);
    const mine = ++sequence;
    requests++;
    inFlight++;
    render();
    loadFacets();
    const started = performance.now();
    fetch(url)
      .then(async (response) => {
        const body = (await response.json()) as GetUsersBody & { detail?: string };
        if (!response.ok) throw new Error(body.detail ?? `HTTP ${response.status}`);
        if (mine !== sequence) return;
        ms = performance.now() - started;
        data = body.data;
        total = body.total;
        appliedUrl = url;
        lastError = null;
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
    const headerRow = document.createElement("tr");
    for (const header of table.getHeaderGroups()[0].headers) {
      const th = document.createElement("th");
      const sorted = header.column.getIsSorted();
      th.textContent = String(header.column.columnDef.header ?? header.column.id);
      th.dataset.column = header.column.id;
      th.className = "sortable";
      th.setAttribute("aria-sort", sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none");
      const arrow = document.createElement("span");
      arrow.className = "sort-arrow";
      arrow.textContent = sorted === "asc" ? " ▲" : sorted === "desc" ? " ▼" : "";
      th.append(arrow);
      th.addEventListener("click", (event) => header.column.getToggleSortingHandler()?.(event));
      headerRow.append(th);
    }
    el.thead.replaceChildren(headerRow, filterRow);

    const body = document.createDocumentFragment();
    for (const row of table.getRowModel().rows) {
      const tr = document.createElement("tr");
      for (const cell of row.getAllCells()) {
        const td = document.createElement("td");
        const value = cell.getValue();
        const spec = specOf.get(cell.column.id);
        td.textContent = spec === undefined ? String(value) : cellText(spec, value);
        if (cell.column.id === "status") td.className = `status status-${String(value)}`;
        tr.append(td);
      }
      body.append(tr);
    }
    el.tbody.replaceChildren(body);

    const pageCount = table.getPageCount();
    el.pageInfo.textContent = `Page ${pageCount === 0 ? 0 : state.pagination.pageIndex + 1} of ${pageCount}`;
    el.totalInfo.textContent = `${total.toLocaleString("en")} total`;
    el.latencyInfo.textContent = appliedUrl === "" ? "" : `${Math.round(ms)} ms`;
    el.exportLink.href = buildExportUrl(endpoint, state);
    el.empty.hidden = !(inFlight === 0 && appliedUrl !== "" && total === 0 && lastError === null);
    el.urlInfo.textContent = lastError !== null ? `error: ${lastError}` : appliedUrl;
    el.firstButton.disabled = !table.getCanPreviousPage();
    el.prevButton.disabled = !table.getCanPreviousPage();
    el.nextButton.disabled = !table.getCanNextPage();
    el.lastButton.disabled = !table.getCanNextPage();
    el.pageSizeSelect.value = String(state.pagination.pageSize);
    document.body.classList.toggle("ts-loading", inFlight > 0);
  }

  // A filter box under each added column's header (the seed's four have the toolbar's controls).
  const filterRow = document.createElement("tr");
  filterRow.className = "filter-row";
  for (const column of schema) {
    const th = document.createElement("th");
    const hint = FILTER_HINTS[column.kind];
    if (!(column.id in SEED_COLUMNS) && isFaceted(column)) {
      const select = document.createElement("select");
      select.dataset.filter = column.id;
      select.setAttribute("aria-label", `filter ${column.id}`);
      select.add(new Option("any", ""));
      select.addEventListener("change", () => table.getColumn(column.id)?.setFilterValue(select.value === "" ? undefined : select.value));
      facetSelects.set(column.id, select);
      th.append(select);
    } else if (!(column.id in SEED_COLUMNS) && hint !== null) {
      const input = document.createElement("input");
      input.type = "search";
      input.placeholder = hint;
      input.dataset.filter = column.id;
      input.setAttribute("aria-label", `filter ${column.id}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      input.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => table.getColumn(column.id)?.setFilterValue(input.value.trim() === "" ? undefined : input.value), FILTER_DEBOUNCE_MS);
      });
      th.append(input);
    }
    filterRow.append(th);
  }

  // Controls → TanStack state.
  for (const size of TANSTACK_PAGE_SIZES) el.pageSizeSelect.add(new Option(String(size), String(size)));
  el.pageSizeSelect.addEventListener("change", () => table.setPageSize(Number(el.pageSizeSelect.value)));
  el.firstButton.addEventListener("click", () => table.firstPage());
  el.prevButton.addEventListener("click", () => table.previousPage());
  el.nextButton.addEventListener("click", () => table.nextPage());
  el.lastButton.addEventListener("click", () => table.lastPage());
  let nameTimer: ReturnType<typeof setTimeout> | undefined;
  el.nameInput.addEventListener("input", () => {
    clearTimeout(nameTimer);
    nameTimer = setTimeout(() => table.getColumn("name")?.setFilterValue(el.nameInput.value || undefined), FILTER_DEBOUNCE_MS);
  });
  el.statusSelect.addEventListener("change", () => table.getColumn("status")?.setFilterValue(el.statusSelect.value || undefined));
  let idTimer: ReturnType<typeof setTimeout> | undefined;
  const onIdRange = () => {
    clearTimeout(idTimer);
    idTimer = setTimeout(() => {
      const min = el.idMinInput.value.trim();
      const max = el.idMaxInput.value.trim();
      table.getColumn("id")?.setFilterValue(min === "" && max === "" ? undefined : [min, max]);
    }, FILTER_DEBOUNCE_MS);
  };
  el.idMinInput.addEventListener("input", onIdRange);
  el.idMaxInput.addEventListener("input", onIdRange);
  el.urlModeSelect.value = urlMode;
  el.urlModeSelect.addEventListener("change", () => {
    urlMode = el.urlModeSelect.value === "raw" ? "raw" : "encoded";
    load();
  });

  load();

  return {
    snapshot: () => ({
      ...state,
      total,
      pageCount: table.getPageCount(),
      rows: data.map((row) => ({ ...row })),
      loading: inFlight > 0,
      settled: inFlight === 0 && appliedUrl === buildUsersUrl(endpoint, state, urlMode),
      url: appliedUrl,
      requests,
      error: lastError,
      urlMode,
      ms,
      facets: Object.fromEntries([...serverFacets].map(([id, counts]) => [id, [...counts]])),
    }),
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    setUrlMode: (mode: UrlMode) => {
      urlMode = mode;
      el.urlModeSelect.value = mode;
      load();
    },
    setSearch: (text: string) => table.setGlobalFilter(text),
  };
}
