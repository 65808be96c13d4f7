/// Printing an account shows its id and state, never a token.
extension Account: CustomStringConvertible, CustomDebugStringConvertible {
    /// A one-line summary without token values.
    public var description: String {
        var parts = ["id: \(id)", "status: \(status.rawValue)"]
        if let tokenType { parts.append("tokenType: \(tokenType)") }
        if let scope { parts.append("scope: \(scope)") }
        if let screenName { parts.append("screenName: \(screenName)") }
        if let endUser { parts.append("endUser: \(endUser.id)") }
        if let expiresAt { parts.append("expiresAt: \(RFC3339Date.format(expiresAt))") }
        parts.append("accessToken: \(accessToken)")
        if let refreshToken { parts.append("refreshToken: \(refreshToken)") }
        if let tokenSecret { parts.append("tokenSecret: \(tokenSecret)") }
        if let idToken { parts.append("idToken: \(idToken)") }
        return "Account(\(parts.joined(separator: ", ")))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }
}
