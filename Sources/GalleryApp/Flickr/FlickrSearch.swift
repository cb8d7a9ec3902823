import Foundation

/// The filters, order and page of `flickr.photos.search` (and the methods that are searches:
/// `getRecent`, `people.getPublicPhotos`), read from the call's arguments as Flickr reads them:
/// unknown or malformed optional values are ignored, `per_page` is clamped to 1…500 (100 when
/// absent or not a positive number), `page` is at least 1.
struct FlickrSearch: Sendable {
    /// How results are ordered (`sort`).
    enum Sort: String, Sendable {
        case datePostedDesc = "date-posted-desc"
        case datePostedAsc = "date-posted-asc"
        case dateTakenDesc = "date-taken-desc"
        case dateTakenAsc = "date-taken-asc"
        case relevance
    }

    /// Words over title, tags and file name (galleryd's full-text `search` column).
    var text: String?
    /// Tags asked for (`tags`, comma-separated).
    var tags: [String] = []
    /// Whether every tag must be present (`tag_mode=all`) rather than any.
    var allTags = false
    /// The owner's objectId (`user_id`; `me` is the session's user).
    var userId: String?
    /// Upload time bounds (`min_upload_date`, `max_upload_date`).
    var minUploaded: Date?, maxUploaded: Date?
    /// Taken time bounds (`min_taken_date`, `max_taken_date`).
    var minTaken: Date?, maxTaken: Date?
    /// The order (`sort`, default `date-posted-desc`).
    var sort: Sort = .datePostedDesc
    /// The page, from 1.
    var page = 1
    /// Photos per page, 1…500.
    var perPage = 100

    /// Most photos per page, as Flickr.
    static let maxPerPage = 500
    /// Photos per page when `per_page` is absent or not a positive number, as Flickr.
    static let defaultPerPage = 100
    /// Highest page read (beyond it the answer is the empty page of the last one asked for anyway).
    static let maxPage = 1_000_000

    /// Whether any filter narrows the search (Flickr refuses a search without one: code 3).
    var hasFilter: Bool {
        text != nil || !tags.isEmpty || userId != nil || minUploaded != nil || maxUploaded != nil || minTaken != nil
            || maxTaken != nil
    }

    /// The search `parameters` describe; `me` is the caller's user id, if any.
    init(_ parameters: FlickrParameters, me: String?) {
        text = parameters.nonEmpty("text")?.trimmingCharacters(in: .whitespaces)
        if text?.isEmpty == true { text = nil }
        tags = (parameters["tags"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        allTags = parameters["tag_mode"] == "all"
        if let user = parameters.nonEmpty("user_id") { userId = user == "me" ? (me ?? "") : user }
        minUploaded = Self.date(parameters["min_upload_date"])
        maxUploaded = Self.date(parameters["max_upload_date"])
        minTaken = Self.date(parameters["min_taken_date"])
        maxTaken = Self.date(parameters["max_taken_date"])
        sort = parameters["sort"].flatMap(Sort.init(rawValue:)) ?? .datePostedDesc
        (page, perPage) = Self.paging(parameters)
    }

    /// `page` and `per_page` as Flickr reads them.
    static func paging(_ parameters: FlickrParameters) -> (page: Int, perPage: Int) {
        var perPage = parameters["per_page"].flatMap { Int($0) } ?? defaultPerPage
        if perPage < 1 { perPage = defaultPerPage }
        let page = parameters["page"].flatMap { Int($0) } ?? 1
        return (min(max(1, page), maxPage), min(perPage, maxPerPage))
    }

    /// A date argument: Unix seconds, or MySQL's `YYYY-MM-DD[ HH:MM:SS]` in UTC; nil otherwise.
    static func date(_ text: String?) -> Date? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.allSatisfy(\.isNumber) {
            guard let seconds = Int64(text), seconds < 253_402_300_800 else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
