extension ProviderPresets {
    /// The Microsoft preset for the tenant whose id is `tenant`: OpenID Connect from the tenant's own discovery
    /// document, with the issuer `https://login.microsoftonline.com/<tenant>/v2.0`.
    ///
    /// Only a tenant id qualifies. OIDC Discovery §4.3 has the document's
    /// `issuer` equal the URL it was fetched under, and Entra's documents name
    /// the tenant by id: a verified domain's (`contoso.onmicrosoft.com`) names
    /// the id, and `common`, `organizations` and `consumers` name a
    /// `{tenantid}` template. Accepting another issuer than the one asked would
    /// let a document speak for a tenant it was not fetched for, so those keep
    /// the documented static endpoints.
    ///
    /// The account keeps the id it always had, Graph `/me`'s `id`, asked after
    /// the ID token is checked: the token's `sub` is pairwise per application
    /// and differs from it, so naming accounts by `sub` would give every
    /// connected user a second account. PKCE stays on whatever the document lists.
    static func microsoftDiscovery(_ preset: ProviderConfiguration, tenant: String) -> ProviderConfiguration {
        var c = preset
        c.kind = .oidc
        // Entra writes tenant ids in lowercase in its issuers; a GUID's case carries no meaning.
        c.issuer = "https://login.microsoftonline.com/" + tenant.lowercased() + "/v2.0"
        c.authorizeURL = nil
        c.tokenURL = nil
        c.oidcOptions.pkce = preset.pkce
        c.oidcOptions.userFromUserEndpoint = true
        return c
    }

    /// Whether `value` is a tenant id: a GUID in its 8-4-4-4-12 hexadecimal form.
    static func isTenantID(_ value: String) -> Bool {
        let groups = value.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.utf8.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { group in
                group.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
            }
    }
}
