/// What a remote MCP server provider must have before anything is fetched: the server's URL.
///
/// The endpoints and the client come later, from discovery (``MCPAuthorization``).
struct MCPSettings: ProviderKindSettings, Sendable {
    /// The provider as configured, endpoints absent.
    let provider: ProviderConfiguration
    /// The server URL.
    let server: String

    /// Reads `provider` through `required`: `server`.
    init(_ provider: ProviderConfiguration, reading required: inout RequiredSettings) {
        self.provider = provider
        server = required.text("server", provider.mcpServer)
    }
}
