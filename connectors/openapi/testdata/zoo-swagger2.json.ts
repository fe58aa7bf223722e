type ApiListAnimalsInput = { ids?: number[]; limit?: number; names?: string[]; species?: string[] };

type ApiListAnimalsOutput = ApiAnimal[];

type ApiAnimal = {
  /** @format date */
  born?: string | null;
  /** @format int64 */
  id?: number;
  keeper?: ApiKeeper;
  name: string;
};

type ApiKeeper = { animals?: ApiAnimal[]; name?: string };

type ApiAddAnimalInput = {
  /** The new animal. */
  body: ApiAnimal;
};

type ApiAddAnimalOutput = ApiAnimal;

type ApiUploadAnimalPhotoInput = {
  /** @format int64 */
  animalId: number;
  body: {
    note?: string;
    photo: string | {
      /** The content, base64-encoded. */
      base64: string;
      filename?: string;
      mediaType?: string;
    };
  };
};

type ApiUploadAnimalPhotoOutput = null;

type ApiUpdateKeeperInput = { "X-Zoo-Key": string; body: { shift: "day" | "night" }; name: string };

type ApiUpdateKeeperOutput = ApiKeeper;

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

/** Zoo */
declare const api: {
  /** GET /animals */
  listAnimals(input: ApiListAnimalsInput): Promise<ApiListAnimalsOutput>;
  /**
   * POST /animals
   * Requires approval.
   */
  addAnimal(input: ApiAddAnimalInput): Promise<ApiAddAnimalOutput>;
  /**
   * POST /animals/{animalId}/photo
   * Requires approval.
   */
  uploadAnimalPhoto(input: ApiUploadAnimalPhotoInput): Promise<ApiUploadAnimalPhotoOutput>;
  /**
   * PUT /keepers/{name}
   * Requires approval.
   */
  updateKeeper(input: ApiUpdateKeeperInput): Promise<ApiUpdateKeeperOutput>;
  /**
   * Make any HTTP request to this API, with the connector's base URL and credentials, and get {status, headers, body} whatever the status (it throws only when no answer came). path is relative to the base URL, or an absolute URL under it, such as a Link header's next page. A request that reaches one of the API's operations follows that operation's rules (its approval; refused if the configuration excluded it); any other requires approval unless the method is GET, HEAD, OPTIONS or TRACE.
   * Requires approval.
   */
  request(input: ApiRequestInput): Promise<ApiRequestOutput>;
  /** The OpenAPI document this connector was built from, as JSON; with pointer (a JSON pointer such as "/components/schemas/user") only that part of it. */
  spec(input: ApiSpecInput): Promise<unknown>;
};
