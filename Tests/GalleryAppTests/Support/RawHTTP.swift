// The raw-socket client, the cluster lock and the environment lookups live in GalleryTestSupport,
// shared with the other test targets; the import is re-exported so every file here sees them,
// and the old name keeps working.
@_exported import GalleryTestSupport

/// The shared raw-socket client under this target's old name (`RawHTTP.exchange`, `RawHTTP.Response`).
typealias RawHTTP = RawHTTPClient
