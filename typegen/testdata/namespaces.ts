type McpAGetSumInput = { q: string };

type McpBGetSumInput = { q: string };

type McpBGetSumOutput = { q: string };

type McpBDeleteInput = { q: string };

declare const mcp: {
  /** Server A. */
  a: {
    /** Adds. */
    get_sum(input: McpAGetSumInput): Promise<unknown>;
  };
  b: {
    /** Requires approval. */
    get_sum(input: McpBGetSumInput): Promise<McpBGetSumOutput>;
    "delete"(input: McpBDeleteInput): Promise<unknown>;
  };
};

type NotesListInput = { [key: string]: unknown };

declare const notes: {
  list(input: NotesListInput): Promise<unknown>;
};

type GithubPullsReviewsListInput = { q: string };

type GithubIssuesListForRepoInput = { q: string };

declare const github: {
  pulls: {
    /** Reviews. */
    reviews: {
      list(input: GithubPullsReviewsListInput): Promise<unknown>;
    };
  };
  issues: {
    list_for_repo(input: GithubIssuesListForRepoInput): Promise<unknown>;
  };
};

type MyOrgToolsXInput = { [key: string]: unknown };

declare const my_org: {
  tools: {
    x(input: MyOrgToolsXInput): Promise<unknown>;
  };
};
