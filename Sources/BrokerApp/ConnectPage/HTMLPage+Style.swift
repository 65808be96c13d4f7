extension HTMLPage {
    /// The only style of every page, inlined so the page loads nothing else, in `accent`'s colours.
    ///
    /// Colours are picked for WCAG 2.2 AA contrast (text ≥ 4.5:1 on its background,
    /// ``PageAccent`` keeps the accent's);
    /// controls are at least 44 px tall for touch, and focus is always visible.
    static func stylesheet(_ accent: PageAccent) -> String {
        ":root{color-scheme:light;--accent:\(accent.fill);--on-accent:\(accent.onFill);--accent-text:\(accent.text);"
            + "--accent-hover:\(accent.hover);--accent-tint:\(accent.tint)}\n" + rules
    }

    /// Every rule of the stylesheet after the colours.
    private static let rules = """
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
        body{margin:0;background:#f4f5f7;color:#1b1f24;\
        font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Helvetica Neue",Arial,sans-serif}
        main{max-width:46rem;margin:0 auto;padding:1.5rem 1rem 3rem}
        h1{font-size:1.75rem;line-height:1.2;margin:.5rem 0 .5rem}
        h2{font-size:1.125rem;margin:2rem 0 .75rem}
        p{margin:.5rem 0}
        a{color:var(--accent-text)}
        code{font:.875em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#e9ecef;\
        padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
        .lead{color:#3d4550;max-width:38rem}
        .list{list-style:none;margin:0;padding:0;background:#fff;border:1px solid #cfd4db;border-radius:10px}
        .list>li{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.875rem 1rem;\
        border-top:1px solid #e3e6ea}
        .list>li:first-child{border-top:0}
        .name{flex:1 1 10rem;font-weight:600;min-width:0}
        .icon{width:1.5rem;height:1.5rem;margin-right:.5rem;vertical-align:-.375rem;object-fit:contain}
        .sub{display:block;font-weight:400;color:#4a525c;font-size:.9375rem;overflow-wrap:anywhere}
        .state{flex:0 1 auto;color:#3d4550}
        .actions{display:flex;flex-wrap:wrap;gap:.5rem}
        .button{display:inline-flex;align-items:center;justify-content:center;min-height:2.75rem;\
        padding:.5rem 1.1rem;border:1px solid var(--accent);border-radius:8px;background:var(--accent);color:var(--on-accent);\
        font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
        .button:hover{background:var(--accent-hover);border-color:var(--accent-hover)}
        .button.secondary{background:#fff;color:var(--accent-text)}
        .button.secondary:hover{background:var(--accent-tint)}
        .button.danger{background:#fff;color:#b3261e;border-color:#b3261e}
        .button.danger:hover{background:#fcefee}
        .button.destructive{background:#b3261e;border-color:#b3261e;color:#fff}
        .button.destructive:hover{background:#8c1d18;border-color:#8c1d18}
        .confirm{margin:1.5rem 0 0}
        a:focus-visible,button:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}
        .badge{display:inline-block;margin-right:.35rem;padding:.05rem .6rem;border:1px solid;border-radius:999px;\
        font-size:.875rem;font-weight:600}
        .badge.active{color:#0f5d26;background:#e7f4ea;border-color:#94c9a2}
        .badge.expired{color:#7a4100;background:#fdf1e1;border-color:#e2b77c}
        .badge.reauthorization{color:#a1251b;background:#fcebea;border-color:#e6a29d}
        .notice{margin:1rem 0;padding:.75rem 1rem;border:1px solid;border-radius:8px}
        .notice.ok{color:#0f3d1b;background:#e7f4ea;border-color:#94c9a2}
        .notice.warn{color:#4d2a00;background:#fdf1e1;border-color:#e2b77c}
        .notice.error{color:#5c130e;background:#fcebea;border-color:#e6a29d}
        .empty{margin:0;padding:1rem;background:#fff;border:1px dashed #b8bec7;border-radius:10px;color:#3d4550}
        .fine{margin-top:1rem;color:#4a525c;font-size:.875rem}
        .field label{display:block;font-weight:600;margin-bottom:.35rem}
        .field input{box-sizing:border-box;width:100%;max-width:32rem;min-height:2.75rem;padding:.5rem .75rem;\
        border:1px solid #8a929c;border-radius:8px;font:inherit}
        .field input:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}
        @media (max-width:32rem){h1{font-size:1.5rem}.actions{flex:1 1 100%}.actions>*{flex:1 1 0}\
        .actions .button{width:100%}}
        """
}
