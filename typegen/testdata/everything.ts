type EverythingGetSumInput = {
  /** First number */
  a: number;
  /** Second number */
  b: number;
};

/** MCP server that exercises all the features of the MCP protocol */
declare const everything: {
  /** Returns the sum of two numbers */
  get_sum(input: EverythingGetSumInput): Promise<unknown>;
};
