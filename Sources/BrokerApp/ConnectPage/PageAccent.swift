import BrokerCrypto
import Foundation

/// The accent colour of the pages and the colours derived from it, chosen so text keeps WCAG 2.2 AA contrast (4.5:1).
///
/// An operator picks one colour (`BROKER_PAGE_ACCENT`); buttons are filled
/// with it, their label is white or near-black, whichever reads better on it,
/// and where the accent is text on the light page (links, secondary buttons)
/// it is darkened until it reaches 4.5:1.
struct PageAccent: Sendable, Equatable {
    /// The fill of primary buttons and the border of every accent button.
    let fill: String
    /// Text on ``fill``.
    let onFill: String
    /// The accent as text on the page's light backgrounds.
    let text: String
    /// The fill of a hovered primary button.
    let hover: String
    /// The background of a hovered secondary button.
    let tint: String

    /// The look the pages had before accents could be set: a blue with white labels.
    static let standard = PageAccent(fill: "#0b57d0", onFill: "#fff", text: "#0b57d0", hover: "#0842a0", tint: "#eef3fd")

    /// The page's light backgrounds that accent text may sit on (the page, and the warning notice).
    static let lightBackgrounds = [RGB(hex: "#f4f5f7")!, RGB(hex: "#fdf1e1")!]
    /// The dark text colour of the pages.
    static let ink = RGB(hex: "#1b1f24")!

    /// Creates the colours from their CSS values.
    init(fill: String, onFill: String, text: String, hover: String, tint: String) {
        self.fill = fill
        self.onFill = onFill
        self.text = text
        self.hover = hover
        self.tint = tint
    }

    /// The colours for the accent `#rrggbb`; nil when `hex` is not such a colour.
    ///
    /// A mid-tone that neither label colour reads on at 4.5:1 is darkened
    /// until a white label does, so the operator's colour bends rather than the text.
    init?(hex: String) {
        guard var fill = RGB(hex: hex) else { return nil }
        let white = RGB(red: 1, green: 1, blue: 1), black = RGB(red: 0, green: 0, blue: 0)
        while max(fill.contrast(with: white), fill.contrast(with: Self.ink)) < 4.5 {
            fill = fill.mixed(with: black, by: 0.05)
        }
        let labelIsWhite = fill.contrast(with: white) >= fill.contrast(with: Self.ink)
        var text = fill
        // Darken in small steps until it reads on every light background; black always does.
        while Self.lightBackgrounds.contains(where: { text.contrast(with: $0) < 4.5 }) {
            text = text.mixed(with: black, by: 0.05)
        }
        self.init(
            fill: fill.hex, onFill: labelIsWhite ? "#fff" : Self.ink.hex, text: text.hex,
            hover: fill.mixed(with: labelIsWhite ? black : white, by: 0.2).hex,
            tint: fill.mixed(with: white, by: 0.92).hex)
    }

    /// An sRGB colour with channels from 0 to 1.
    struct RGB: Sendable, Equatable {
        var red: Double
        var green: Double
        var blue: Double

        init(red: Double, green: Double, blue: Double) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        /// `#rrggbb` in either case; nil otherwise.
        init?(hex: String) {
            guard hex.utf8.count == 7, hex.hasPrefix("#"), let bytes = Hex.decode(String(hex.dropFirst())) else { return nil }
            self.init(red: Double(bytes[0]) / 255, green: Double(bytes[1]) / 255, blue: Double(bytes[2]) / 255)
        }

        /// `#rrggbb`, lowercase.
        var hex: String {
            "#" + Hex.encode([red, green, blue].map { UInt8((min(max($0, 0), 1) * 255).rounded()) })
        }

        /// Relative luminance (WCAG 2.2, "relative luminance").
        var luminance: Double {
            func linear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
            return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
        }

        /// The contrast ratio with `other`, from 1 to 21 (WCAG 2.2, "contrast ratio").
        func contrast(with other: RGB) -> Double {
            let (light, dark) = luminance > other.luminance ? (luminance, other.luminance) : (other.luminance, luminance)
            return (light + 0.05) / (dark + 0.05)
        }

        /// This colour moved `amount` (0 to 1) of the way to `other`.
        func mixed(with other: RGB, by amount: Double) -> RGB {
            RGB(
                red: red + (other.red - red) * amount, green: green + (other.green - green) * amount,
                blue: blue + (other.blue - blue) * amount)
        }
    }
}
