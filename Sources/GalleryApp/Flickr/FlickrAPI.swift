import Foundation

/// The Flickr methods galleryd answers (`FlickrRoutes` parses the call and writes the answer):
/// each takes the call's arguments and caller and returns the entries of Flickr's `<rsp>`, or
/// throws a `FlickrError`.
///
/// Photo URLs are Flickr-shaped (`FlickrAssetURLs`); which sizes a photo has and their pixels come
/// from the display sizes (`SizeService.location`), which also render them when fetched.
struct FlickrAPI: Sendable {
    let repository: FlickrRepository
    let sizes: SizeService
    let urls: FlickrAssetURLs

    /// The methods, by name.
    static let methods: [String: @Sendable (FlickrAPI, FlickrParameters, ParseCaller) throws -> [FlickrValue.Entry]] = [
        "flickr.test.echo": { api, parameters, _ in api.echo(parameters) },
        "flickr.photos.search": { api, parameters, caller in try api.search(parameters, caller: caller) },
        "flickr.photos.getRecent": { api, parameters, caller in try api.recent(parameters, caller: caller) },
        "flickr.photos.getInfo": { api, parameters, caller in try api.photoInfo(parameters, caller: caller) },
        "flickr.photos.getSizes": { api, parameters, caller in try api.photoSizes(parameters, caller: caller) },
        "flickr.people.getPublicPhotos": { api, parameters, _ in try api.publicPhotos(parameters) },
        "flickr.photosets.getList": { api, parameters, caller in try api.photosetList(parameters, caller: caller) },
        "flickr.photosets.getPhotos": { api, parameters, caller in try api.photosetPhotos(parameters, caller: caller) },
    ]

    /// Answers `method` (112 for one galleryd does not implement).
    func call(_ method: String, _ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        guard let body = Self.methods[method] else { throw FlickrError.methodNotFound(String(method.prefix(100))) }
        return try body(self, parameters, caller)
    }

    /// `flickr.test.echo`: every argument back, each as `{"_content": value}`.
    func echo(_ parameters: FlickrParameters) -> [FlickrValue.Entry] {
        var seen = Set<String>()
        return parameters.items.compactMap { item in
            // A name that cannot be an XML element name is left out of both formats.
            guard Self.isElementName(item.name), seen.insert(item.name).inserted else { return nil }
            return (item.name, FlickrValue.text(item.value))
        }
    }

    /// `flickr.photos.search` (code 3 without any filter, as Flickr).
    func search(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        let search = FlickrSearch(parameters, me: caller.userId)
        guard search.hasFilter else { throw FlickrError.parameterlessSearch }
        return try photosPage(search, parameters, caller: caller)
    }

    /// `flickr.photos.getRecent`: the newest photos the caller may see.
    func recent(_ parameters: FlickrParameters, caller: ParseCaller) throws -> [FlickrValue.Entry] {
        var search = FlickrSearch(FlickrParameters([]), me: nil)
        (search.page, search.perPage) = FlickrSearch.paging(parameters)
        return try photosPage(search, parameters, caller: caller)
    }

    /// `flickr.people.getPublicPhotos`: a user's public photos, whoever asks (code 1 for no such user).
    func publicPhotos(_ parameters: FlickrParameters) throws -> [FlickrValue.Entry] {
        guard let user = parameters.nonEmpty("user_id"), try repository.username(user) != nil else {
            throw FlickrError.userNotFound
        }
        var search = FlickrSearch(FlickrParameters([]), me: nil)
        search.userId = user
        (search.page, search.perPage) = FlickrSearch.paging(parameters)
        return try photosPage(search, parameters, caller: .anonymous)
    }

    /// A `photos` page: `page`, `pages`, `perpage`, `total` and the photos with their extras.
    private func photosPage(_ search: FlickrSearch, _ parameters: FlickrParameters, caller: ParseCaller) throws
        -> [FlickrValue.Entry]
    {
        let (photos, total) = try repository.search(search, caller: caller)
        let extras = FlickrExtras(parameters["extras"])
        let base = urls.publicURL()
        let items = photos.map { listed($0, extras: extras, base: base) }
        return [
            (
                "photos",
                .object(
                    Self.paging(page: search.page, perPage: search.perPage, total: total) + [("photo", .list(items))])
            )
        ]
    }

    /// Flickr's paging numbers.
    static func paging(page: Int, perPage: Int, total: Int) -> [FlickrValue.Entry] {
        [
            ("page", .int(page)), ("pages", .int((total + perPage - 1) / perPage)), ("perpage", .int(perPage)),
            ("total", .int(total)),
        ]
    }

    /// A photo as a list shows it: Flickr's fixed fields, then the `extras` asked for; `base` is
    /// the public URL (`urls.publicURL()`, read once a page).
    func listed(_ photo: FlickrPhoto, extras: FlickrExtras, base: String, isPrimary: Bool? = nil) -> FlickrValue {
        let secret = urls.secret(photo.id)
        var entries: [FlickrValue.Entry] = [
            ("id", .string(photo.id)), ("owner", .string(photo.ownerId)), ("secret", .string(secret)),
            ("server", .string(FlickrAssetURLs.server)), ("farm", .int(FlickrAssetURLs.farm)),
            ("title", .string(photo.title)),
        ]
        if let isPrimary { entries.append(("isprimary", .string(isPrimary ? "1" : "0"))) }
        entries += [("ispublic", .int(photo.isPublic ? 1 : 0)), ("isfriend", .int(0)), ("isfamily", .int(0))]
        if extras.contains("description") { entries.append(("description", .text(""))) }
        if extras.contains("date_upload") { entries.append(("dateupload", .string(String(photo.uploaded)))) }
        if extras.contains("last_update") { entries.append(("lastupdate", .string(String(photo.updated)))) }
        if extras.contains("date_taken") {
            entries += [
                ("datetaken", .string(photo.taken ?? Self.mysqlDate(photo.uploaded))),
                ("datetakengranularity", .int(0)),
                ("datetakenunknown", .string(photo.taken == nil ? "1" : "0")),
            ]
        }
        if extras.contains("owner_name") { entries.append(("ownername", .string(photo.ownerName))) }
        if extras.contains("original_format") {
            entries += [
                ("originalsecret", .string(urls.originalSecret(photo.id))),
                ("originalformat", .string(urls.format(photo))),
            ]
        }
        if extras.contains("o_dims") {
            entries += [("o_width", .int(photo.sized.width)), ("o_height", .int(photo.sized.height))]
        }
        if extras.contains("tags") { entries.append(("tags", .string(photo.tags.joined(separator: " ")))) }
        for size in extras.sizes {
            guard let location = sizes.location(photo: photo.sized, size: size) else { continue }
            entries += [
                (size.urlExtra, .string(urls.url(photo, size: size, displaySecret: secret, base: base))),
                (size.heightKey, .int(location.height)),
                (size.widthKey, .int(location.width)),
            ]
        }
        return .object(entries)
    }

    /// Whether `name` is a plain XML element name: ASCII letters, digits, `_`, `-`, `.`, not
    /// starting with a digit, `-` or `.`, at most 64 characters.
    static func isElementName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, !(48...57).contains(first), first != 45, first != 46 else {
            return false
        }
        return bytes.allSatisfy { byte in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 95
                || byte == 45 || byte == 46
        }
    }

    /// Unix seconds as `YYYY-MM-DD HH:MM:SS` in UTC (proleptic Gregorian; by arithmetic, as a
    /// list may need it for every photo: Howard Hinnant's `civil_from_days`).
    static func mysqlDate(_ seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ number: Int) -> String { number < 10 ? "0" + String(number) : String(number) }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return yearText + "-" + two(month) + "-" + two(day) + " " + two(time / 3_600) + ":" + two(time / 60 % 60) + ":"
            + two(time % 60)
    }
}
