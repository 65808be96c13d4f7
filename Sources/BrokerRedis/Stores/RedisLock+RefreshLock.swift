import BrokerCore

/// The Redis lock is the refresh lock every replica shares: `SET NX PX` with a random owner token, released only by its owner.
extension RedisLock: RefreshLock {}
