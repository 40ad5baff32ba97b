/**
 * A set-style column filter for AG Grid Community fed by POST <base>/facets (docs/api.md
 * "Facets"): the column's values with their counts under the grid's other filters and the
 * search, as checkboxes. Its model is AG Grid's set filter model `{filterType: "set", values}`,
 * which POST /api/users takes. (AG Grid's own set filter is an Enterprise module; under a
 * server row model it would need the values supplied anyway.)
 */
import type { IDoesFilterPassParams, IFilterComp, IFilterParams } from "ag-grid-community";
import { type Row, apiFetch, failureText, problemOf } from "./api.ts";

/** One value of a facet (docs/api.md "Facets"). */
export interface FacetValue {
  /** The value; null stands for the column's empty (null) cells, which a set filter selects with `null`. */
  value: string | boolean | null;
  count: number;
}

/** The body of a facets answer, for one values facet. */
interface FacetsBody {
  facets: Record<string, { values?: FacetValue[]; distinct?: number; nulls: number }>;
  total: number;
}

/** What the page passes to the filter (colDef `filterParams`). */
export interface FacetFilterParams {
  /** URL of POST <base>/facets. */
  facetsEndpoint: string;
  /** The search text now in the page's search box (sent as `quickFilter`). */
  quickFilter: () => string;
}

/** Values listed at most (the rest are counted in the footer). */
const LIST_LIMIT = 50;

/**
 * The filter component (AG Grid's IFilterComp). Opening it asks the server for the column's
 * values under every other filter; ticking values filters the grid to them.
 */
export class FacetSetFilter implements IFilterComp<Row> {
  private params!: IFilterParams<Row> & FacetFilterParams;
  private gui!: HTMLDivElement;
  private list!: HTMLDivElement;
  private footer!: HTMLParagraphElement;
  /** Ticked values, as JSON text (strings and booleans kept apart). */
  private selected = new Set<string>();
  /** A model of another filter type set through the grid's api: passed through as it is. */
  private foreign: Record<string, unknown> | null = null;
  private values: FacetValue[] = [];
  private request = 0;

  init(params: IFilterParams<Row> & FacetFilterParams): void {
    this.params = params;
    this.gui = document.createElement("div");
    this.gui.className = "facet-filter";
    this.gui.dataset.column = params.column.getColId();
    this.list = document.createElement("div");
    this.list.className = "facet-values";
    this.list.setAttribute("role", "group");
    this.list.setAttribute("aria-label", `${params.column.getColId()} values`);
    this.footer = document.createElement("p");
    this.footer.className = "facet-footer";
    const clear = document.createElement("button");
    clear.type = "button";
    clear.textContent = "Clear";
    clear.addEventListener("click", () => {
      this.selected.clear();
      this.foreign = null;
      this.render();
      this.params.filterChangedCallback();
    });
    this.gui.append(this.list, this.footer, clear);
  }

  getGui(): HTMLElement {
    return this.gui;
  }

  /** Fetches the column's facet each time the filter opens (the other filters may have changed). */
  afterGuiAttached(): void {
    void this.loadValues();
  }

  isFilterActive(): boolean {
    return this.foreign !== null || this.selected.size > 0;
  }

  /** Rows are filtered on the server (Infinite Row Model): every row the server sent passes. */
  doesFilterPass(_params: IDoesFilterPassParams<Row>): boolean {
    return true;
  }

  getModel(): Record<string, unknown> | null {
    if (this.foreign !== null) return this.foreign;
    if (this.selected.size === 0) return null;
    return { filterType: "set", values: [...this.selected].map((v) => JSON.parse(v) as unknown) };
  }

  setModel(model: Record<string, unknown> | null): void {
    this.selected.clear();
    this.foreign = null;
    if (model !== null && model !== undefined) {
      if (model.filterType === "set" && Array.isArray(model.values)) for (const v of model.values) this.selected.add(JSON.stringify(v));
      else this.foreign = model;
    }
    this.render();
  }

  /** POST <base>/facets for this column under the grid's filter model and the search (with the page's credential). */
  private async loadValues(): Promise<void> {
    const column = this.params.column.getColId();
    const mine = ++this.request;
    this.footer.textContent = "counting…";
    try {
      const response = await apiFetch(this.params.facetsEndpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ columns: [column], filterModel: this.params.api.getFilterModel(), quickFilter: this.params.quickFilter(), limit: LIST_LIMIT }),
      });
      if (!response.ok) throw new Error(failureText(response.status, await problemOf(response)));
      const body = (await response.json()) as FacetsBody;
      if (mine !== this.request) return;
      const facet = body.facets[column];
      const listed = facet.values ?? [];
      // null cells are a choice of their own (docs/api.md "Filter model": `null` in a set filter's values)
      this.values = facet.nulls > 0 ? [...listed, { value: null, count: facet.nulls }] : listed;
      this.render();
      const more = (facet.distinct ?? 0) - listed.length;
      this.footer.textContent = `${more > 0 ? `${more} more values · ` : ""}counts under the other filters`;
    } catch (error) {
      if (mine === this.request) this.footer.textContent = `the values could not be loaded (${(error as Error).message})`;
    }
  }

  /** Checkboxes of the loaded values (and of ticked values the answer no longer lists). */
  private render(): void {
    const shown = new Map(this.values.map((v) => [JSON.stringify(v.value), v]));
    for (const key of this.selected) if (!shown.has(key)) shown.set(key, { value: JSON.parse(key) as FacetValue["value"], count: 0 });
    const rows = [...shown].map(([key, v]) => {
      const label = document.createElement("label");
      label.className = "facet-value";
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = key;
      box.checked = this.selected.has(key);
      box.addEventListener("change", () => {
        this.foreign = null;
        if (box.checked) this.selected.add(key);
        else this.selected.delete(key);
        this.params.filterChangedCallback();
      });
      const name = document.createElement("span");
      name.textContent = v.value === null ? "(empty)" : String(v.value);
      if (v.value === null) name.className = "facet-null";
      const count = document.createElement("span");
      count.className = "facet-count";
      count.textContent = v.count.toLocaleString("en");
      label.append(box, name, count);
      return label;
    });
    this.list.replaceChildren(...rows);
  }
}
