@_exported import ObjectStoreStorage
