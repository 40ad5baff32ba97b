/**
 * A role's view applied to a parsed request (docs/api.md "Access control"): the role's filter
 * ANDed with the request's filter (listing, search, export, explain; facets keep it apart, as
 * a scope no column's own filter drops), and the request's search told to look into the role's
 * searchable columns alone, so that a term never matches through a column the role does not see.
 */
import { withinScope } from "../query/columns.ts";
import type { FacetQuery } from "../query/facets.ts";
import type { Predicate, Query } from "../query/types.ts";
import type { RoleView } from "./view.ts";

/**
 * `filter` with every search in it restricted to `columns` (the role's searchable columns), the
 * rest of the tree shared; the same object when it holds no search or `columns` is null.
 */
export function restrictSearch(filter: Predicate | null, columns: string[] | null): Predicate | null {
  if (filter === null || columns === null) return filter;
  switch (filter.kind) {
    case "column":
      return filter;
    case "search":
      return { kind: "search", terms: filter.terms, columns };
    case "and":
    case "or": {
      let changed = false;
      const children = filter.children.map((child) => {
        const restricted = restrictSearch(child, columns) as Predicate;
        if (restricted !== child) changed = true;
        return restricted;
      });
      return changed ? { kind: filter.kind, children } : filter;
    }
  }
}

/**
 * The request's own query as the role asks it: its search restricted to the role's columns
 * (what explain prints as the query); `query` itself without a view.
 */
export function requestQuery(view: RoleView | null, query: Query): Query {
  if (view === null || view.searchColumns === null) return query;
  const filter = restrictSearch(query.filter, view.searchColumns);
  return filter === query.filter ? query : { ...query, filter };
}

/** The query a role's request runs: the role's filter ANDed with the request's (its search restricted); `query` itself without a view. */
export function scopedQuery(view: RoleView | null, query: Query): Query {
  if (view === null) return query;
  const own = requestQuery(view, query);
  if (view.filter === null) return own;
  return { ...own, filter: withinScope(view.filter, own.filter) };
}

/** A role's facets request: counted within the role's rows, its search restricted; `facets` itself without a view. */
export function scopedFacets(view: RoleView | null, facets: FacetQuery): FacetQuery {
  if (view === null) return facets;
  return { ...facets, filter: restrictSearch(facets.filter, view.searchColumns), scope: withinScope(view.filter, facets.scope ?? null) };
}
