// Placeholder so the module builds; replaced by the RESP client and the Redis stores.
