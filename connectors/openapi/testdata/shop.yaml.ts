type ApiItemsListAllInput = {
  "X-Request-Id"?: string;
  color?: ("red" | "green")[];
  filter?: { max?: number; min?: number };
  /**
   * At most this many.
   * @default 20
   */
  limit?: number;
  session?: string;
  /** Only items with these tags. */
  tag?: string[];
};

type ApiItemsListAllOutput = ApiItem[];

/** An item for sale. */
type ApiItem = ApiNewItem & {
  category?: ApiCategory;
  example?: string;
  id: number;
  related?: ApiItem[];
};

type ApiNewItem = {
  color?: "red" | "green" | null;
  name: string;
  price: number;
  tags?: string[];
};

type ApiCategory = { name?: string; parent?: ApiCategory | null };

type ApiCreateItemInput = {
  /** The item to create. */
  body: ApiNewItem;
};

type ApiCreateItemOutput = ApiItem | { ticket: string };

type ApiGetItemInput = { id: number };

type ApiGetItemOutput = ApiItem;

type ApiDeleteItemInput = { id: number };

type ApiDeleteItemOutput = null;

type ApiPatchItemsIdInput = { body?: ApiItemPatch; id: number };

type ApiPatchItemsIdOutput = ApiItem;

type ApiItemPatch = { name?: string; price?: number | null };

type ApiUploadPhotoInput = {
  body: {
    caption?: string;
    /** The photo. */
    file: string | {
      /** The content, base64-encoded. */
      base64: string;
      filename?: string;
      mediaType?: string;
    };
    meta?: { [key: string]: string };
  };
  id: number;
};

type ApiUploadPhotoOutput = {
  /** The content, base64-encoded. */
  base64: string;
  mediaType: string;
};

type ApiGetFileInput = { path: string };

type ApiGetFileOutput = string;

type ApiLoginInput = {
  body?: {
    /** @format password */
    password: string;
    user: string;
  };
};

type ApiLoginOutput = { expires?: string | null; token?: string };

type ApiBrokenInput = { other?: unknown };

type ApiBrokenOutput = unknown;

type ApiGetCategoriesCategoryIdItemsInput = { categoryId: string };

type ApiGetCategoriesCategoryIdItemsOutput = ApiItem[];

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

/** Shop */
declare const api: {
  /**
   * List items
   *
   * GET /items
   */
  items_list_all(input: ApiItemsListAllInput): Promise<ApiItemsListAllOutput>;
  /**
   * Create an item
   *
   * POST /items
   * Requires approval.
   */
  createItem(input: ApiCreateItemInput): Promise<ApiCreateItemOutput>;
  /** GET /items/{id} */
  getItem(input: ApiGetItemInput): Promise<ApiGetItemOutput>;
  /**
   * Delete an item
   *
   * DELETE /items/{id}
   * Requires approval.
   * @deprecated
   */
  deleteItem(input: ApiDeleteItemInput): Promise<ApiDeleteItemOutput>;
  /**
   * PATCH /items/{id}
   * Requires approval.
   */
  patch_items_id(input: ApiPatchItemsIdInput): Promise<ApiPatchItemsIdOutput>;
  /**
   * PUT /items/{id}/photo
   * Requires approval.
   */
  uploadPhoto(input: ApiUploadPhotoInput): Promise<ApiUploadPhotoOutput>;
  /** GET /files/{path} */
  getFile(input: ApiGetFileInput): Promise<ApiGetFileOutput>;
  /**
   * POST /login
   * Requires approval.
   */
  login(input: ApiLoginInput): Promise<ApiLoginOutput>;
  /** GET /broken */
  broken(input: ApiBrokenInput): Promise<ApiBrokenOutput>;
  /**
   * Items of a category, without operationId.
   *
   * GET /categories/{categoryId}/items
   */
  get_categories_categoryId_items(input: ApiGetCategoriesCategoryIdItemsInput): Promise<ApiGetCategoriesCategoryIdItemsOutput>;
  /**
   * Make any HTTP request to this API, with the connector's base URL and credentials, and get {status, headers, body} whatever the status (it throws only when no answer came). path is relative to the base URL, or an absolute URL under it, such as a Link header's next page. A request that reaches one of the API's operations follows that operation's rules (its approval; refused if the configuration excluded it); any other requires approval unless the method is GET, HEAD, OPTIONS or TRACE.
   * Requires approval.
   */
  request(input: ApiRequestInput): Promise<ApiRequestOutput>;
  /** The OpenAPI document this connector was built from, as JSON; with pointer (a JSON pointer such as "/components/schemas/user") only that part of it. */
  spec(input: ApiSpecInput): Promise<unknown>;
};
