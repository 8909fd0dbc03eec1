import { Refusal } from '../../src/outcomes/refusal';
import { parseMultipart } from '../../src/ingest/multipart';

const limits = { maxFileBytes: 1024, maxFiles: 2, maxFields: 5, maxFieldBytes: 1024 };

describe('parseMultipart on broken bodies', () => {
  it('answers 400 to a body that ends inside a file part (it used to crash the process)', async () => {
    const raw = Buffer.from('--B\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\nabc');
    const parsed = parseMultipart(raw, 'multipart/form-data; boundary=B', limits);
    await expect(parsed).rejects.toBeInstanceOf(Refusal);
    await expect(parsed).rejects.toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it('answers 400 to a multipart type without a boundary', async () => {
    await expect(parseMultipart(Buffer.from('x'), 'multipart/form-data', limits)).rejects.toMatchObject({ status: 400 });
  });
});
