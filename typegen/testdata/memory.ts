type MemoryCreateEntitiesInput = {
  entities: {
    /** The type of the entity */
    entityType: string;
    /** The name of the entity */
    name: string;
    /** An array of observation contents associated with the entity */
    observations: string[];
  }[];
};

type MemoryCreateEntitiesOutput = {
  entities: {
    /** The type of the entity */
    entityType: string;
    /** The name of the entity */
    name: string;
    /** An array of observation contents associated with the entity */
    observations: string[];
  }[];
};

type MemoryDeleteEntitiesInput = {
  /** An array of entity names to delete */
  entityNames: string[];
};

type MemoryDeleteEntitiesOutput = { message: string; success: boolean };

type MemoryReadGraphInput = { [key: string]: unknown };

declare const memory: {
  /** Create multiple new entities in the knowledge graph */
  create_entities(input: MemoryCreateEntitiesInput): Promise<MemoryCreateEntitiesOutput>;
  /**
   * Delete multiple entities and their associated relations from the knowledge graph
   * Requires approval.
   */
  delete_entities(input: MemoryDeleteEntitiesInput): Promise<MemoryDeleteEntitiesOutput>;
  /** Read the entire knowledge graph */
  read_graph(input: MemoryReadGraphInput): Promise<unknown>;
};
