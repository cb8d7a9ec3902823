// The raw-socket client lives in GalleryTestSupport, shared with the other test targets; the
// import is re-exported so every file here sees it, and the old name keeps working.
@_exported import GalleryTestSupport

/// The shared raw-socket client under this target's old name.
typealias RawClient = RawHTTPClient
