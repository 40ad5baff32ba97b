/**
 * OpenAPI descriptions of /api/users (documentation only: responses are pre-serialized and
 * not validated at run time). Source: INTERFACE.md.
 */

const user = {
  type: "object",
  required: ["id", "name", "email", "status"],
  properties: {
    id: { type: "number" },
    name: { type: "string" },
    email: { type: "string" },
    status: { type: "string", enum: ["active", "inactive"] },
  },
} as const;

const problem = {
  description: "application/problem+json (RFC 9457)",
  content: {
    "application/problem+json": {
      schema: {
        type: "object",
        required: ["type", "title", "status", "detail"],
        properties: {
          type: { type: "string" },
          title: { type: "string" },
          status: { type: "integer" },
          detail: { type: "string" },
          requestId: { type: "string" },
          errors: {
            type: "array",
            items: {
              type: "object",
              properties: { parameter: { type: "string" }, pointer: { type: "string" }, detail: { type: "string" } },
            },
          },
        },
      },
    },
  },
};

const column = { type: "string", enum: ["id", "name", "email", "status"] };

/** The GET operation's `detail` (parameters and responses). */
export function getUsersDoc(maxPageSize: number) {
  const q = (name: string, schema: object, description: string) => ({ name, in: "query", required: false, schema, description });
  return {
    summary: "List users (TanStack Table, query parameters)",
    description:
      "Paged, sorted, filtered user records. The body is both shape A ({data,total,page,pageSize}) and shape B ({data,pagination,meta}).",
    tags: ["users"],
    parameters: [
      q("page", { type: "integer", minimum: 1, default: 1 }, "1-based page; past the end gives data: [] with the true total."),
      q("pageSize", { type: "integer", minimum: 1, maximum: maxPageSize, default: 10 }, "Rows per page."),
      q("limit", { type: "integer", minimum: 1, maximum: maxPageSize }, "Alternative spelling of pageSize."),
      q("sortBy", column, "Column to sort by."),
      q("sort", column, "Alternative spelling of sortBy."),
      q("sortOrder", { type: "string", enum: ["asc", "desc"], default: "asc" }, "Sort direction (case-insensitive)."),
      q("order", { type: "string", enum: ["asc", "desc"] }, "Alternative spelling of sortOrder."),
      q("filter[name]", { type: "string", maxLength: 256 }, "Case- and accent-insensitive substring."),
      q("filter[email]", { type: "string", maxLength: 256 }, "Case- and accent-insensitive substring."),
      q("filter[status]", { type: "string" }, "active, inactive, or a comma list of them."),
      q("filter[id]", { type: "string" }, '"42" equals; "10,50" inclusive range, either side optional.'),
    ],
    responses: {
      200: {
        description: "A page of users",
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["data", "total", "page", "pageSize", "pagination"],
              properties: {
                data: { type: "array", items: user },
                total: { type: "integer" },
                page: { type: "integer" },
                pageSize: { type: "integer" },
                pagination: {
                  type: "object",
                  properties: {
                    page: { type: "integer" },
                    pageSize: { type: "integer" },
                    total: { type: "integer" },
                    totalPages: { type: "integer" },
                  },
                },
                meta: {
                  type: "object",
                  properties: {
                    sortBy: { type: "string" },
                    sortOrder: { type: "string", enum: ["asc", "desc"] },
                    filters: { type: "object", additionalProperties: { type: "string" } },
                  },
                },
              },
            },
          },
        },
      },
      400: problem,
    },
  };
}

/** The POST operation's `detail` (request body and responses). */
export function postUsersDoc(maxPageSize: number) {
  return {
    summary: "List users (AG Grid Infinite Row Model, row window)",
    description: `Rows [startRow, endRow) of the sorted, filtered users (at most ${maxPageSize}); total counts every match. Body at most 64 KiB.`,
    tags: ["users"],
    requestBody: {
      required: false,
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: {
              startRow: { type: "integer", minimum: 0, default: 0 },
              endRow: { type: "integer", description: "Exclusive; default startRow + 100." },
              sortModel: {
                type: "array",
                items: {
                  type: "object",
                  required: ["colId", "sort"],
                  properties: {
                    colId: column,
                    sort: { type: "string", enum: ["asc", "desc"] },
                    type: { type: "string", enum: ["default", "absolute"] },
                  },
                },
              },
              filterModel: {
                type: "object",
                nullable: true,
                description: "AG Grid filter models per column: text, number (id), set, combined (operator + conditions).",
                additionalProperties: { type: "object" },
              },
            },
          },
        },
      },
    },
    responses: {
      200: {
        description: "A row window",
        content: {
          "application/json": {
            schema: { type: "object", required: ["data", "total"], properties: { data: { type: "array", items: user }, total: { type: "integer" } } },
          },
        },
      },
      400: problem,
      413: problem,
      415: problem,
    },
  };
}

/** The /healthz operation's `detail`. */
export const healthDoc = {
  summary: "Health: row count and snapshot id",
  tags: ["service"],
  responses: {
    200: {
      description: "Serving",
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: { status: { type: "string" }, rows: { type: "integer" }, snapshotId: { type: "string" } },
          },
        },
      },
    },
  },
};
