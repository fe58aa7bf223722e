type FileGetItemInput = {
  /** @format uuid */
  id: string;
};

type FileGetItemOutput = FileItem;

/** An item with children. */
type FileItem = {
  children?: FileItem[];
  id: string;
  kind: "file" | "dir" | "it's \"quoted\"";
  parent?: FileItem | null;
};

type FileGetItem2Input = { key?: number };

type FilePutListInput = {
  headers?: { [key: string]: string };
  json?: FileJson;
  list: FileList2;
  loop?: FileA;
  pair?: [string, number];
  "x-trace-id"?: string | null;
};

type FilePutListOutput = { saved: FileList2 };

/** Any JSON value. */
type FileJson = string | number | boolean | null | FileJson[] | { [key: string]: FileJson };

type FileList2 = FileEntry[];

type FileA = FileB | string;

type FileEntry = { name: string };

type FileB = unknown;

/** A node of a tree. */
type FileTreeInput = { children?: FileTreeInput[]; label: string };

type FileTreeOutput = string;

type FileBrokenInput = unknown;

type FileBrokenOutput = never;

/** A connector exercising every construct: refs, recursion, collisions, quoting. Ends *\/ early? */
declare const file: {
  /**
   * Gets an item by id.
   *
   * The id is the item's *\/ key.
   */
  get_item(input: FileGetItemInput): Promise<FileGetItemOutput>;
  /** Same name once sanitized; gets suffix 2. */
  getItem(input: FileGetItem2Input): Promise<unknown>;
  /**
   * Definitions shared between input and output, a DOM name (FileList) and a direct cycle.
   * Requires approval.
   */
  put_list(input: FilePutListInput): Promise<FilePutListOutput>;
  /** A recursive input refers to itself with #. */
  tree(input: FileTreeInput): Promise<FileTreeOutput>;
  /** Invalid schemas fall back to unknown. */
  broken(input: FileBrokenInput): Promise<FileBrokenOutput>;
};
