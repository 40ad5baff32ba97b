/**
 * The demo page's AG Grid client (browser code): AG Grid Community with the Infinite Row Model,
 * reading POST <base> (api.ts `apiBase`, `/api/users` by default) in blocks of 100 rows
 * (docs/api.md "POST /api/users"), its columns taken from the served schema.
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
  CellStyleModule,
  createGrid,
  themeQuartz,
} from "ag-grid-community";
import { type ColumnKind, type Row, type SchemaBody, type SchemaColumn, apiFetch, cellText, failureText, keyOf, problemOf, saveDownload } from "./api.ts";
import { type FacetFilterParams, FacetSetFilter } from "./facet-filter.ts";

// Only the modules the page uses (CustomFilter: the facet-fed set filter; CellStyle: the cells' kind classes); RowApi and ScrollApi serve the tests' `getDisplayedRowAtIndex` and `ensureIndexVisible`.
ModuleRegistry.registerModules([InfiniteRowModelModule, CustomFilterModule, CellStyleModule, TextFilterModule, NumberFilterModule, DateFilterModule, RowApiModule, ScrollApiModule]);

/** Rows per block: the size of every POST <base> window (docs/api.md: `cacheBlockSize` 100). */
export const AG_BLOCK_ROWS = 100;

/** One POST <base> request the datasource sent, as the page recorded it (for tests and the status line). */
export interface AgRequestRecord {
  /** The JSON body exactly as sent: `{startRow, endRow, sortModel, filterModel, quickFilter}`. */
  body: { startRow: number; endRow: number; sortModel: unknown; filterModel: unknown; quickFilter: string };
  /** HTTP status, or 0 when the request failed before a response. */
  status: number;
  /** `total` of the response (the `lastRow` passed to successCallback), when it succeeded. */
  total?: number;
  /** Milliseconds from send to callback. */
  ms: number;
  /** Why it failed (`HTTP 401: …`, a network error), when it did. */
  error?: string;
}

/**
 * AG Grid's filter for each column kind (docs/api.md "Filter model"): number columns
 * the number filter, date and datetime the date filter, text columns (a text key included) the
 * text filter, enum and boolean columns the set filter fed by the facets endpoint
 * ({@link FacetSetFilter}, "facets"), json columns none.
 */
const KIND_FILTERS: Record<ColumnKind, string | null> = {
  number: "agNumberColumnFilter",
  date: "agDateColumnFilter",
  datetime: "agDateColumnFilter",
  text: "agTextColumnFilter",
  enum: "facets",
  boolean: "facets",
  json: null,
};

/** Initial column widths by kind, in CSS pixels: text and json wide and flexible, the rest fixed. */
function sizeOf(column: SchemaColumn, isKey: boolean): Pick<ColDef<Row>, "width" | "minWidth" | "flex"> {
  if (column.kind === "text" && isKey) return { width: 300, minWidth: 140 };
  if (column.kind === "text" || column.kind === "json") return { flex: 1, minWidth: 200 };
  if (column.kind === "datetime") return { width: 230, minWidth: 140 };
  return { width: 150, minWidth: 110 };
}

/**
 * The grid's columns for a snapshot's schema, in schema order, one per column and nothing
 * special by name: the filter of its kind ({@link KIND_FILTERS}; enum and boolean columns take
 * the set filter fed by POST <base>/facets), every column sortable but json ones, values shown
 * as their output strings (json as JSON text).
 * @param schema the served schema (GET <base>/schema)
 * @param facets what the set filters read (the facets endpoint, the search box)
 */
export function columnDefsFor(schema: SchemaBody, facets: FacetFilterParams): ColDef<Row>[] {
  const key = keyOf(schema);
  return schema.columns.map((column) => {
    const filter = KIND_FILTERS[column.kind];
    const isKey = column.id === key;
    const def: ColDef<Row> = {
      colId: column.id,
      field: column.id,
      headerName: column.id,
      ...sizeOf(column, isKey),
      sortable: column.kind !== "json",
      filter: filter ?? false,
      floatingFilter: filter !== null && filter !== "facets",
      cellClass: `kind-${column.kind}`,
      valueFormatter: (params) => cellText(column, params.value),
    };
    if (filter === "facets") return { ...def, filter: FacetSetFilter, filterParams: facets };
    return def;
  });
}

/**
 * A datasource that POSTs the grid's block request as JSON to `endpoint` (with the page's
 * credential, api.ts `apiFetch`) and answers the grid with `successCallback(data, total)`
 * (docs/api.md shape C), or `failCallback()` on a network error, a non-2xx status or a body
 * without `data` / `total`.
 *
 * @param endpoint URL of POST <base>, e.g. "/api/users".
 * @param log called once per finished request, in completion order.
 * @param quickFilter the search box's text, sent as `quickFilter` (docs/api.md "Global search")
 */
export function createRowsDatasource(endpoint: string, log: (record: AgRequestRecord) => void, quickFilter: () => string = () => ""): IDatasource {
  return {
    getRows(params: IGetRowsParams) {
      const body = { startRow: params.startRow, endRow: params.endRow, sortModel: params.sortModel, filterModel: params.filterModel, quickFilter: quickFilter() };
      const started = performance.now();
      apiFetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
        .then(async (response) => {
          if (!response.ok) {
            const problem = await problemOf(response);
            log({ body, status: response.status, ms: performance.now() - started, error: failureText(response.status, problem) });
            params.failCallback();
            return;
          }
          const json = (await response.json().catch(() => null)) as { data?: Row[]; total?: number } | null;
          if (json === null || !Array.isArray(json.data) || typeof json.total !== "number") {
            log({ body, status: response.status, ms: performance.now() - started, error: "the answer holds no rows" });
            params.failCallback();
            return;
          }
          log({ body, status: response.status, total: json.total, ms: performance.now() - started });
          params.successCallback(json.data, json.total);
        })
        .catch((error: Error) => {
          log({ body, status: 0, ms: performance.now() - started, error: error.message });
          params.failCallback();
        });
    },
  };
}

/**
 * Mounts the grid in `container` (which must have a height) and returns its api.
 * Sorting: click a header; shift-click adds a key (AG Grid's default multi-sort key).
 * Filtering: floating filters under the headers, the set filters in the header menus, or
 * `api.setFilterModel`.
 *
 * @param endpoint URL of POST <base> (api.ts `apiBase`).
 * @param log receives every finished request ({@link AgRequestRecord}).
 * @param schema the served schema (GET <base>/schema): its columns, in order
 * @param quickFilter the search box's text (sent with every block and facet request)
 * @returns AG Grid's api (`GridApi<Row>`); row data arrive asynchronously, block by block.
 */
export function mountAgGrid(container: HTMLElement, endpoint: string, log: (record: AgRequestRecord) => void, schema: SchemaBody, quickFilter: () => string): GridApi<Row> {
  // No getRowId: the infinite model's own ids are positions, which stay unique even if a row
  // moves between two blocks while the data changes underneath (a row id would then repeat).
  return createGrid<Row>(container, {
    theme: themeQuartz,
    columnDefs: columnDefsFor(schema, { facetsEndpoint: `${endpoint}/facets`, quickFilter }),
    defaultColDef: { sortable: true, floatingFilter: true, resizable: true, filterParams: { maxNumConditions: 2 } },
    rowModelType: "infinite",
    cacheBlockSize: AG_BLOCK_ROWS,
    maxConcurrentDatasourceRequests: 2,
    datasource: createRowsDatasource(endpoint, log, quickFilter),
  });
}

/**
 * Downloads the grid's current view as CSV: POST <base>/export with the grid's sort and
 * filter models and the search (docs/api.md "Export"), saved under the server's file name.
 * @param sortModel the sort model of the grid's last block request (what the view shows)
 * @returns the number of bytes saved
 * @throws Error when the server refuses the request
 */
export async function exportAgView(api: GridApi<Row>, endpoint: string, sortModel: unknown, quickFilter: string): Promise<number> {
  const response = await apiFetch(`${endpoint}/export`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ format: "csv", sortModel, filterModel: api.getFilterModel(), quickFilter }),
  });
  return saveDownload(response, "export.csv");
}
