type ApiListNotesInput = { after?: string | null; q?: ApiQuery };

type ApiListNotesOutput = ApiNote[];

type ApiQuery = { text?: string };

type ApiNote = {
  /** Who wrote it. */
  author?: ApiAuthor;
  kind?: "note";
  pair?: [string, number, ...unknown[]];
  score?: number;
  /** Plain text. */
  text: string;
};

type ApiAuthor = { name?: string } | null;

type ApiRequestInput = {
  /** Sent as JSON, unless a Content-Type header says otherwise (then a string is sent as it is). */
  body?: unknown;
  headers?: { [key: string]: string };
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "TRACE" | "get" | "head" | "post" | "put" | "patch" | "delete" | "options" | "trace";
  /** Path relative to the base URL ("/repos/o/r/issues"), or an absolute URL under it. */
  path: string;
  /** Query parameters; an array value repeats the key. */
  query?: {
    [key: string]: string | number | boolean | (string | number | boolean)[];
  };
};

type ApiRequestOutput = {
  /** JSON decoded; text as a string; other content as {mediaType, base64}; null when empty. */
  body: unknown;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: { [key: string]: string };
  status: number;
};

type ApiSpecInput = { pointer?: string };

/** Notes */
declare const api: {
  /** GET /notes */
  list_notes(input: ApiListNotesInput): Promise<ApiListNotesOutput>;
  /**
   * Make any HTTP request to this API, with the connector's base URL and credentials, and get {status, headers, body} whatever the status (it throws only when no answer came). path is relative to the base URL, or an absolute URL under it, such as a Link header's next page. A request that reaches one of the API's operations follows that operation's rules (its approval; refused if the configuration excluded it); any other requires approval unless the method is GET, HEAD, OPTIONS or TRACE.
   * Requires approval.
   */
  request(input: ApiRequestInput): Promise<ApiRequestOutput>;
  /** The OpenAPI document this connector was built from, as JSON; with pointer (a JSON pointer such as "/components/schemas/user") only that part of it. */
  spec(input: ApiSpecInput): Promise<unknown>;
};
