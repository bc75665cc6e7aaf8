import { expect } from 'chai';
import { sanitizeFileName } from '../src/files/file.name.js';
import { sniffContentType } from '../src/files/file.sniff.js';

describe('file names: sanitized before they are stored or sent back', () => {
  it('keeps the last path segment of either separator', () => {
    expect(sanitizeFileName('../../etc/passwd')).to.equal('passwd');
    expect(sanitizeFileName('C:\\Users\\x\\report.pdf')).to.equal('report.pdf');
  });
  it('removes control and bidirectional-override characters and replaces reserved ones', () => {
    expect(sanitizeFileName('a\u0000b\u0007c\u202etxt.exe')).to.equal('abctxt.exe');
    expect(sanitizeFileName('what<is>:this"|?*.txt')).to.equal('what_is__this____.txt');
  });
  it('drops leading dots and trailing dots and spaces; an empty name becomes file', () => {
    expect(sanitizeFileName('.htaccess')).to.equal('htaccess');
    expect(sanitizeFileName('name. . ')).to.equal('name');
    expect(sanitizeFileName('...')).to.equal('file');
    expect(sanitizeFileName(undefined)).to.equal('file');
  });
  it('cuts to 255 bytes of UTF-8 on a character boundary, keeping a short extension', () => {
    const name = sanitizeFileName(`${'ç'.repeat(300)}.pdf`);
    expect(Buffer.byteLength(name)).to.be.at.most(255);
    expect(name.endsWith('ç.pdf')).to.equal(true);
  });
  it('normalizes to NFC', () => {
    expect(sanitizeFileName('cafe\u0301.txt')).to.equal('caf\u00e9.txt');
  });
});

describe('content types: sniffed from the bytes', () => {
  it('recognises formats by their signature', async () => {
    expect(await sniffContentType(Buffer.from('%PDF-1.7\n'))).to.equal('application/pdf');
    expect(await sniffContentType(Buffer.from('ffd8ffe000104a464946', 'hex'))).to.equal('image/jpeg');
    expect(await sniffContentType(Buffer.from('504b030414000600', 'hex'))).to.match(/zip/);
  });
  it('takes UTF-8 without control characters for text, even cut inside a character', async () => {
    expect(await sniffContentType(Buffer.from('linha 1\r\nlinha 2\tç'))).to.equal('text/plain');
    expect(await sniffContentType(Buffer.from('ção').subarray(0, 4))).to.equal('text/plain');
  });
  it('answers application/octet-stream for anything else, and for nothing', async () => {
    expect(await sniffContentType(Buffer.from([0x00, 0x01, 0x02, 0x03]))).to.equal('application/octet-stream');
    expect(await sniffContentType(Buffer.from([0xc3, 0x28, 0x41]))).to.equal('application/octet-stream');
    expect(await sniffContentType(Buffer.alloc(0))).to.equal('application/octet-stream');
  });
});
