type NamedCreatePetInput = {
  owner?: NamedSimpleUser | null;
  pet: NamedPet;
  /** Labels; at most *\/ 10. */
  tags?: NamedTag[];
};

type NamedCreatePetOutput = NamedPet;

type NamedSimpleUser = { friends?: NamedSimpleUser[]; login: string };

/** A pet: a cat or a dog. */
type NamedPet = NamedCat | NamedDog;

type NamedTag = "a" | "b";

type NamedCat = NamedAnimal & {
  kind: "cat";
  /** @default 9 */
  lives?: number;
};

type NamedDog = NamedAnimal & { good?: boolean; kind: "dog" };

type NamedAnimal = {
  /**
   * @format date
   * @example "2020-01-01"
   */
  born?: string;
  name: string;
};

type NamedTreeInput = NamedNode;

type NamedTreeOutput = {
  e?: NamedElement;
  first?: Named1st;
  n?: NamedNode2;
  self?: NamedN;
  slash?: NamedAB;
};

type NamedNode = { forest?: NamedForest; value: number };

/** @deprecated */
type NamedElement = number;

type Named1st = boolean;

/** Same name, different container: gets a suffix. */
type NamedNode2 = string;

type NamedN = NamedNode2;

type NamedAB = null;

type NamedForest = NamedNode[];

type NamedRootRefInput = { id: number; next?: NamedRootRefInput };

/** Named types: every kind of local reference, recursion, inheritance by allOf, tagged unions, names that collide or are not identifiers. */
declare const named: {
  /**
   * allOf inheritance, a oneOf of references with a discriminator, a nullable reference.
   * Requires approval.
   */
  create_pet(input: NamedCreatePetInput): Promise<NamedCreatePetOutput>;
  /** Mutual recursion through objects and arrays stays named. */
  tree(input: NamedTreeInput): Promise<NamedTreeOutput>;
  /** A reference to the whole schema names the Input type itself. */
  root_ref(input: NamedRootRefInput): Promise<unknown>;
};
