// Placeholder so the module builds; replaced by the primitives and their vectors.
