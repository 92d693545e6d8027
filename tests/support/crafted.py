"""Crafted hostile uploads: small files that unpack or expand to a lot (tests and bench/crafted_uploads.py)."""
from __future__ import annotations

import io
import zipfile


def docx_bomb(unpacked_mb: int = 100) -> bytes:
    """A .docx-shaped ZIP whose document.xml unpacks to `unpacked_mb` MB of repeated XML (about 0.1% packed)."""
    buf = io.BytesIO()
    chunk = b"<w:p><w:r><w:t>" + b"lorem ipsum " * 80 + b"</w:t></w:r></w:p>" * 1
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as part:
            written = 0
            while written < unpacked_mb * 1_000_000:
                part.write(chunk)
                written += len(chunk)
    return buf.getvalue()


def docx_empty_paragraphs(paragraphs: int = 1_200_000) -> bytes:
    """A real .docx (python-docx's template) whose body is `paragraphs` empty paragraphs: about 50 KB packed
    for 1.2M, under every size cap, yet an object per paragraph once parsed."""
    return docx_with_body(b"<w:p></w:p>" * paragraphs)


def docx_many_runs(runs: int = 400_000) -> bytes:
    """A real .docx with one paragraph of `runs` one-letter runs: few paragraphs, an object per run once parsed."""
    return docx_with_body(b"<w:p>" + b"<w:r><w:t>a</w:t></w:r>" * runs + b"</w:p>")


def docx_with_body(body_xml: bytes) -> bytes:
    """python-docx's template .docx with `body_xml` at the start of its body."""
    from docx import Document

    template = io.BytesIO()
    Document().save(template)
    out = io.BytesIO()
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "word/document.xml":
                head, body, rest = data.partition(b"<w:body>")
                data = head + body + body_xml + rest
            dst.writestr(item.filename, data)
    return out.getvalue()


def docx_many_parts(parts: int = 5000) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for i in range(parts):
            z.writestr(f"word/media/p{i}.xml", "")
    return buf.getvalue()


def pdf_pages(pages: int = 5000, text: str = "One line of text on every page.") -> bytes:
    """A PDF of `pages` pages that all share one small content stream."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    return _shared_stream_pdf(pages, stream)


_W_NS = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_HEADER_REL = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/header"


def _rewrite_docx(edit) -> bytes:
    """python-docx's template .docx with `edit(name, data) -> {name: data}` applied to every part (issue 46)."""
    from docx import Document

    template = io.BytesIO()
    Document().save(template)
    out = io.BytesIO()
    with zipfile.ZipFile(template) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for item in src.infolist():
            for name, data in edit(item.filename, src.read(item.filename)).items():
                dst.writestr(name, data)
    return out.getvalue()


def docx_redirect(paragraphs: int = 1_200_000) -> bytes:
    """The package relationships name word/main.xml (`paragraphs` empty paragraphs) as the main part; a one-paragraph
    decoy word/document.xml is what a reader counting by name sees. python-docx opens main.xml."""
    def edit(name, data):
        if name == "word/document.xml":
            head, body, rest = data.partition(b"<w:body>")
            return {"word/document.xml": head + body + b"<w:p><w:r><w:t>Decoy.</w:t></w:r></w:p>" + rest,
                    "word/main.xml": head + body + b"<w:p/>" * paragraphs + rest}
        if name == "_rels/.rels":
            return {name: data.replace(b"word/document.xml", b"word/main.xml")}
        if name == "[Content_Types].xml":
            return {name: data.replace(b"/word/document.xml", b"/word/main.xml")}
        if name == "word/_rels/document.xml.rels":
            return {"word/_rels/main.xml.rels": data}
        return {name: data}
    return _rewrite_docx(edit)


def docx_header_bomb(paragraphs: int = 1_200_000) -> bytes:
    """A real document with one short paragraph and a header part of `paragraphs` empty paragraphs."""
    header = b'<?xml version="1.0" encoding="UTF-8"?><w:hdr ' + _W_NS + b">" + b"<w:p/>" * paragraphs + b"</w:hdr>"

    def edit(name, data):
        if name == "word/document.xml":
            head, body, rest = data.partition(b"<w:body>")
            return {name: head + body + b"<w:p><w:r><w:t>A short letter.</w:t></w:r></w:p>" + rest,
                    "word/header1.xml": header}
        if name == "word/_rels/document.xml.rels":
            rel = b'<Relationship Id="rIdBomb" Type="' + _HEADER_REL + b'" Target="header1.xml"/>'
            return {name: data.replace(b"</Relationships>", rel + b"</Relationships>")}
        if name == "[Content_Types].xml":
            override = (b'<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-'
                        b'officedocument.wordprocessingml.header+xml"/>')
            return {name: data.replace(b"</Types>", override + b"</Types>")}
        return {name: data}
    return _rewrite_docx(edit)


def pdf_operator_bomb(pages: int = 499, operators: int = 900_000) -> bytes:
    """`pages` pages (under the page cap) sharing one Flate-compressed content stream of `operators` `q`/`Q`
    operators: about 80 KB, and seconds of parsing per page for a reader that parses every page's stream."""
    import zlib

    # one text operator at the end: pypdf parses only a stream that can give text
    stream = zlib.compress(b"q Q\n" * (operators // 2) + b"BT /F1 12 Tf 72 720 Td (x) Tj ET\n", 9)
    return _shared_stream_pdf(pages, stream, flate=True)


def _shared_stream_pdf(pages: int, stream: bytes, flate: bool = False) -> bytes:
    """A PDF of `pages` pages that all draw the one content stream `stream` (Flate-compressed when `flate`)."""
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages)).encode()
    header = b"<< /Length %d /Filter /FlateDecode >>" if flate else b"<< /Length %d >>"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
               header % len(stream) + b"\nstream\n" + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
                b"/Resources << /Font << /F1 4 0 R >> >> >>"] * pages
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_PKG_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
             b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
             b'2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
_PART_TYPES = {"header": b"header", "footnotes": b"footnotes"}


def docx_parts(body: bytes, part: str | None = None, part_xml: bytes = b"", compression: int = zipfile.ZIP_DEFLATED
               ) -> bytes:
    """A minimal .docx built with zipfile alone (issue 55): the main part's body is `body`; `part` ("header" or
    "footnotes"), when given, is a related part whose root holds `part_xml`, stored with `compression`."""
    root = {"header": b"w:hdr", "footnotes": b"w:footnotes"}
    document = (b'<?xml version="1.0" encoding="UTF-8"?><w:document ' + _W_NS + b"><w:body>" + body +
                b"</w:body></w:document>")
    rels = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            b'2006/relationships">')
    if part:
        rels += (b'<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                 + _PART_TYPES[part] + b'" Target="' + part.encode() + b'1.xml"/>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", b"<Types/>")
        z.writestr("_rels/.rels", _PKG_RELS)
        z.writestr("word/document.xml", document)
        z.writestr("word/_rels/document.xml.rels", rels + b"</Relationships>")
        if part:
            xml = b"<" + root[part] + b" " + _W_NS + b">" + part_xml + b"</" + root[part] + b">"
            z.writestr(f"word/{part}1.xml", b'<?xml version="1.0" encoding="UTF-8"?>' + xml,
                       compress_type=compression, compresslevel=9)
    return buf.getvalue()


LETTER = b"<w:p><w:r><w:t>A short letter.</w:t></w:r></w:p>"


def docx_element_bomb(elements: int = 7_000_000, where: str = "header") -> bytes:
    """`elements` empty elements that are neither paragraphs nor runs, in a header or in the main part (~60 KB)."""
    if where == "main":
        return docx_parts(LETTER + b"<w:x/>" * elements)
    return docx_parts(LETTER, "header", b"<w:x/>" * elements)


def docx_bzip2_header(elements: int = 8_000_000) -> bytes:
    """A header of `elements` empty elements (~48 MB, under the unpacked cap) stored with bzip2: a few KB."""
    return docx_parts(LETTER, "header", b"<a/>" * elements, compression=zipfile.ZIP_BZIP2)


def docx_attribute_bomb(attributes: int = 3_000_000, per_element: int = 100) -> bytes:
    """A footnotes part of `attributes` attributes, `per_element` on each of its elements."""
    tag = b"<w:x " + b" ".join(b'a%d=""' % i for i in range(per_element)) + b"/>"
    return docx_parts(LETTER, "footnotes", tag * (attributes // per_element))
