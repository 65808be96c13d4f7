// Placeholder so the module builds.
