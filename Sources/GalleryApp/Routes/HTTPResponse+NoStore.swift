import HTTPServer

extension HTTPResponse {
    /// `Cache-Control: no-store`, on every answer that is not a GET's success: client caches
    /// (FoundationNetworking's URLCache keys entries by path without the query and stores POST
    /// answers) would otherwise hand a later `GET /classes/Photo?…` the answer of an earlier
    /// `POST /classes/Photo`, or keep serving an error.
    static let noStoreValue = "no-store"

    /// This response, marked so no cache keeps it.
    func notStored() -> HTTPResponse {
        var response = self
        response.headers["Cache-Control"] = Self.noStoreValue
        return response
    }
}
