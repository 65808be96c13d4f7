extension ProvidersFileEntry {
    /// `resource_urls`: name → URL, or name → `{"url": URL, "fields": [names]}`; each fetched with the access token
    /// after connecting and kept under `raw.<name>` (``ResourceLookup``). JSON null or `{}` means none.
    func resourceLookups() throws(ProviderConfigurationError) -> [ResourceLookup] {
        let key = "resource_urls"
        guard let raw = settings[key], !ProviderValue.isNull(raw) else { return [] }
        guard let table = raw as? [String: Any] else {
            throw failure(key, "must be an object of name to URL, or to {\"url\": …, \"fields\": […]}")
        }
        guard table.count <= ResourceLookup.maximumLookups else {
            throw failure(key, "may name at most \(ResourceLookup.maximumLookups) documents")
        }
        var lookups: [ResourceLookup] = []
        for name in table.keys.sorted() {
            if let problem = ResourceLookup.problem(withName: name) { throw failure(key, problem) }
            let written: Any?
            var fields: [String]?
            if let entry = table[name] as? [String: Any] {
                if let unknown = entry.keys.sorted().first(where: { $0 != "url" && $0 != "fields" }) {
                    throw failure(key, "\"\(name)\" has the unknown key \"\(unknown)\"; expected url and fields")
                }
                written = entry["url"]
                if let list = entry["fields"] {
                    guard let names = list as? [String], (1...32).contains(names.count),
                        names.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 })
                    else {
                        throw failure(key, "the fields of \"\(name)\" must be an array of 1 to 32 member names")
                    }
                    fields = names
                }
            } else {
                written = table[name]
            }
            guard let text = written as? String else { throw failure(key, "\"\(name)\" needs a URL string") }
            let url = try checkedURL(try resolve(text, key: key), key: key)
            lookups.append(ResourceLookup(name: name, url: url, fields: fields))
        }
        return lookups
    }
}
