import BrokerCrypto

extension HTMLPage {
    /// The only style of every page, inlined so the page loads nothing else.
    ///
    /// Colours are picked for WCAG 2.2 AA contrast (text ≥ 4.5:1 on its background);
    /// controls are at least 44 px tall for touch, and focus is always visible.
    static let stylesheet = """
        :root{color-scheme:light}
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
        body{margin:0;background:#f4f5f7;color:#1b1f24;\
        font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Helvetica Neue",Arial,sans-serif}
        main{max-width:46rem;margin:0 auto;padding:1.5rem 1rem 3rem}
        h1{font-size:1.75rem;line-height:1.2;margin:.5rem 0 .5rem}
        h2{font-size:1.125rem;margin:2rem 0 .75rem}
        p{margin:.5rem 0}
        a{color:#0b57d0}
        code{font:.875em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#e9ecef;\
        padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
        .lead{color:#3d4550;max-width:38rem}
        .list{list-style:none;margin:0;padding:0;background:#fff;border:1px solid #cfd4db;border-radius:10px}
        .list>li{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.875rem 1rem;\
        border-top:1px solid #e3e6ea}
        .list>li:first-child{border-top:0}
        .name{flex:1 1 10rem;font-weight:600;min-width:0}
        .sub{display:block;font-weight:400;color:#4a525c;font-size:.9375rem;overflow-wrap:anywhere}
        .state{flex:0 1 auto;color:#3d4550}
        .actions{display:flex;flex-wrap:wrap;gap:.5rem}
        .actions form{margin:0;display:flex}
        .button{display:inline-flex;align-items:center;justify-content:center;min-height:2.75rem;\
        padding:.5rem 1.1rem;border:1px solid #0b57d0;border-radius:8px;background:#0b57d0;color:#fff;\
        font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
        .button:hover{background:#0842a0;border-color:#0842a0}
        .button.secondary{background:#fff;color:#0b57d0}
        .button.secondary:hover{background:#eef3fd}
        .button.danger{background:#fff;color:#b3261e;border-color:#b3261e}
        .button.danger:hover{background:#fcefee}
        .button[disabled]{min-height:2.25rem;padding:.25rem .9rem;background:#e9ecef;border-color:#c4c9d0;color:#4a525c;\
        font-weight:500;cursor:not-allowed}
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
        @media (max-width:32rem){h1{font-size:1.5rem}.actions{flex:1 1 100%}.actions>*{flex:1 1 0}\
        .actions .button{width:100%}}
        """

    /// The CSP source that allows exactly `stylesheet`: `'sha256-<base64 of its SHA-256>'` (CSP Level 3 §2.3.1).
    static let styleSource = "'sha256-" + Base64.encode(SHA256.hash(Array(stylesheet.utf8))) + "'"
}
