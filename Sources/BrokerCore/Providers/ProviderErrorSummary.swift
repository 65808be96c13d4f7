/// The error a provider reported in a body, reduced to what may be shown: the error name and numeric code.
///
/// `error_description` is never included: Weibo's repeats the authorization
/// code (`invalid authorization code:0dd6…`). The name is kept only when it is
/// a short run of plain characters (RFC 6749 §5.2 allows %x20-21 / %x23-5B / %x5D-7E).
struct ProviderErrorSummary: CustomStringConvertible {
    /// The `error` value when it is safe to show.
    let error: String?
    /// The `error_code` digits.
    let errorCode: String?
    /// Whether an `error` field was present at all.
    let hasError: Bool

    /// The summary of `fields`, or nil when they carry neither `error` nor `error_code` (JSON null counts as absent).
    init?(fields: [String: Any]) {
        let rawError = fields["error"].flatMap { ProviderValue.isNull($0) ? nil : $0 }
        let rawCode = fields["error_code"].flatMap { ProviderValue.isNull($0) ? nil : $0 }
        guard rawError != nil || rawCode != nil else { return nil }
        hasError = rawError != nil
        error = (rawError as? String).flatMap(Self.displayable)
        errorCode = rawCode.flatMap(ProviderValue.identifier).flatMap { code in
            code.count <= 12 && code.allSatisfy(\.isNumber) ? code : nil
        }
    }

    /// For example `error invalid_grant (21325)`, `error bad_verification_code`, or `error_code 20502`.
    var description: String {
        switch (error, errorCode) {
        case (let error?, let code?): "error \(error) (\(code))"
        case (let error?, nil): "error \(error)"
        case (nil, let code?): hasError ? "an error field (\(code))" : "error_code \(code)"
        case (nil, nil): "an error field"
        }
    }

    /// `value` when it is 1–64 characters of letters, digits, space and `_ . - !`; else nil.
    private static func displayable(_ value: String) -> String? {
        let plain =
            !value.isEmpty && value.utf8.count <= 64
            && value.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || " _.-!".unicodeScalars.contains(scalar))
            }
        return plain ? value : nil
    }
}
