import { describe, expect, it } from 'vitest';
import { MAX_LABEL_TEXT_LENGTH, cutLabelText } from '../../src/trunk/labelText.js';

describe('cutLabelText', () => {
  it('keeps text of up to 200 code units as it is', () => {
    expect(MAX_LABEL_TEXT_LENGTH).toBe(200);
    const text = 'x'.repeat(200);
    expect(cutLabelText(text)).toBe(text);
    expect(cutLabelText('')).toBe('');
  });

  it('cuts longer text to 199 code units and an ellipsis', () => {
    expect(cutLabelText('x'.repeat(201))).toBe(`${'x'.repeat(199)}…`);
  });

  it('never splits a character made of two code units', () => {
    // '😀' is two UTF-16 code units: at 198 and 199, so a cut after 199 would keep half of it.
    const text = `${'x'.repeat(198)}😀${'x'.repeat(10)}`;
    expect(cutLabelText(text)).toBe(`${'x'.repeat(198)}…`);
  });
});
