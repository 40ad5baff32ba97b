/**
 * The demo page's AG Grid client (browser code): AG Grid Community with the Infinite Row Model,
 * reading POST /api/users in blocks of 100 rows (docs/api.md "AG Grid, Infinite Row Model").
 */
import {
  type ColDef,
  DateFilterModule,
  type GridApi,
  type IDatasource,
  type IGetRowsParams,
  InfiniteRowModelModule,
  ModuleRegistry,
  NumberFilterModule,
  RowApiModule,
  ScrollApiModule,
  TextFilterModule,
  CustomFilterModule,
  createGrid,
  themeQuartz,
} from "ag-grid-community";
import { type SchemaColumn, type UserRow, cellText } from "./api.ts";
import { type FacetFilterParams, FacetSetFilter } from "./facet-filter.ts";

// Only the modules the page uses (CustomFilter: the facet-fed set filter); RowApi and ScrollApi serve the tests' `getDisplayedRowAtIndex` and `ensureIndexVisible`.
ModuleRegistry.registerModules([InfiniteRowModelModule, CustomFilterModule, TextFilterModule, NumberFilterModule, DateFilterModule, RowApiModule, ScrollApiModule]);

/** Rows per block: the size of every POST /api/users window (docs/api.md: `cacheBlockSize` 100). */
export const AG_BLOCK_ROWS = 100;

/** One POST /api/users request the datasource sent, as the page recorded it (for tests and the status line). */
export interface AgRequestRecord {
  /** The JSON body exactly as sent: `{startRow, endRow, sortModel, filterModel, quickFilter}`. */
  body: { startRow: number; endRow: number; sortModel: unknown; filterModel: unknown; quickFilter: string };
  /** HTTP status, or 0 when the request failed before a response. */
  status: number;
  /** `total` of the response (the `lastRow` passed to successCallback), when it succeeded. */
  total?: number;
  /** Milliseconds from send to callback. */
  ms: number;
}

/** The seed's four columns as the grid shows them (`status` takes the facet-fed set filter, see {@link columnDefsFor}). */
const SEED_COLUMNS: Record<string, ColDef<UserRow>> = {
  id: { field: "id", headerName: "ID", filter: "agNumberColumnFilter", width: 130 },
  name: { field: "name", headerName: "Name", filter: "agTextColumnFilter", flex: 1, minWidth: 180 },
  email: { field: "email", headerName: "Email", filter: "agTextColumnFilter", flex: 1.3, minWidth: 220 },
  status: { field: "status", headerName: "Status", width: 150 },
};

/** AG Grid's filter for each column kind (docs/api.md "Filtering on any column"); json columns take none; "facets" is {@link FacetSetFilter}. */
const KIND_FILTERS: Record<SchemaColumn["kind"], string | null> = {
  number: "agNumberColumnFilter",
  date: "agDateColumnFilter",
  datetime: "agDateColumnFilter",
  text: "agTextColumnFilter",
  enum: "facets",
  boolean: "facets",
  json: null,
};

/**
 * The grid's columns for a snapshot's schema: the seed's four as always, then one per added
 * column with the filter of its kind; enum and boolean columns (and `status`) take the set
 * filter fed by POST /api/users/facets; json columns are shown as JSON text, not sortable or filtered.
 * @param facets what the set filters read (the facets endpoint, the search box)
 */
export function columnDefsFor(schema: readonly SchemaColumn[], facets: FacetFilterParams): ColDef<UserRow>[] {
  return schema.map((column) => {
    const filter = KIND_FILTERS[column.kind];
    const setFilter = filter === "facets" ? { filter: FacetSetFilter, filterParams: facets, floatingFilter: false } : null;
    const seed = SEED_COLUMNS[column.id];
    if (seed !== undefined) return setFilter === null ? seed : { ...seed, ...setFilter };
    return {
      field: column.id,
      headerName: column.id,
      minWidth: column.kind === "text" || column.kind === "json" ? 200 : 140,
      filter: filter ?? false,
      floatingFilter: filter !== null,
      sortable: column.kind !== "json",
      valueFormatter: (params) => cellText(column, params.value),
      ...setFilter,
    } satisfies ColDef<UserRow>;
  });
}

/**
 * A datasource that POSTs the grid's block request as JSON to `endpoint` and answers the grid
 * with `successCallback(data, total)` (docs/api.md shape C), or `failCallback()` on a network
 * error, a non-2xx status or a body without `data` / `total`.
 *
 * @param endpoint URL of POST /api/users, e.g. "/api/users".
 * @param log called once per finished request, in completion order.
 * @param quickFilter the search box's text, sent as `quickFilter` (docs/api.md "Global search")
 */
export function createUsersDatasource(endpoint: string, log: (record: AgRequestRecord) => void, quickFilter: () => string = () => ""): IDatasource {
  return {
    getRows(params: IGetRowsParams) {
      const body = { startRow: params.startRow, endRow: params.endRow, sortModel: params.sortModel, filterModel: params.filterModel, quickFilter: quickFilter() };
      const started = performance.now();
      fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
        .then(async (response) => {
          const json = (await response.json().catch(() => null)) as { data?: UserRow[]; total?: number } | null;
          if (!response.ok || json === null || !Array.isArray(json.data) || typeof json.total !== "number") {
            log({ body, status: response.status, ms: performance.now() - started });
            params.failCallback();
            return;
          }
          log({ body, status: response.status, total: json.total, ms: performance.now() - started });
          params.successCallback(json.data, json.total);
        })
        .catch(() => {
          log({ body, status: 0, ms: performance.now() - started });
          params.failCallback();
        });
    },
  };
}

/**
 * Mounts the grid in `container` (which must have a height) and returns its api.
 * Sorting: click a header; shift-click adds a key (AG Grid's default multi-sort key).
 * Filtering: floating filters under the headers, or `api.setFilterModel`.
 *
 * @param endpoint URL of POST /api/users.
 * @param log receives every finished request ({@link AgRequestRecord}).
 * @param schema the served snapshot's columns (GET /api/users/schema)
 * @param quickFilter the search box's text (sent with every block and facet request)
 * @returns AG Grid's api (`GridApi<UserRow>`); row data arrive asynchronously, block by block.
 */
export function mountAgGrid(container: HTMLElement, endpoint: string, log: (record: AgRequestRecord) => void, schema: readonly SchemaColumn[], quickFilter: () => string): GridApi<UserRow> {
  return createGrid<UserRow>(container, {
    theme: themeQuartz,
    columnDefs: columnDefsFor(schema, { facetsEndpoint: `${endpoint}/facets`, quickFilter }),
    defaultColDef: { sortable: true, floatingFilter: true, resizable: true, filterParams: { maxNumConditions: 2 } },
    rowModelType: "infinite",
    cacheBlockSize: AG_BLOCK_ROWS,
    maxConcurrentDatasourceRequests: 2,
    datasource: createUsersDatasource(endpoint, log, quickFilter),
  });
}

/**
 * Downloads the grid's current view as CSV: POST /api/users/export with the grid's sort and
 * filter models and the search (docs/api.md "Export"), saved under the server's file name.
 * @param sortModel the sort model of the grid's last block request (what the view shows)
 * @returns the number of bytes saved
 * @throws Error when the server refuses the request
 */
export async function exportAgView(api: GridApi<UserRow>, endpoint: string, sortModel: unknown, quickFilter: string): Promise<number> {
  const response = await fetch(`${endpoint}/export`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ format: "csv", sortModel, filterModel: api.getFilterModel(), quickFilter }),
  });
  if (!response.ok) throw new Error(`export failed (HTTP ${response.status})`);
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "users.csv";
  const blob = await response.blob();
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  return blob.size;
}
