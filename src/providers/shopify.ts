import { shippedPreset } from './recipe/presets';

/** A catalogue entry of src/providers/presets.json (a recipe); this module names it for imports. */
export const shopify = shippedPreset('shopify');
