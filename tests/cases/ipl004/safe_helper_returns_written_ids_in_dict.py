# label: safe no-twin
# why: the delay mask is written into the ids and the same tensor is handed back in the inputs dict; the generation loop wants the forced tokens
import torch

torch.manual_seed(0)


def apply_delay_mask(input_ids, pad_id, delay_mask):
    if delay_mask is None:
        return input_ids
    n = min(input_ids.shape[1], delay_mask.shape[1])
    input_ids[:, :n] = torch.where(delay_mask[:, :n] == pad_id, input_ids[:, :n], delay_mask[:, :n])
    return input_ids


def prepare_inputs(input_ids, delay_mask=None):
    input_ids = input_ids.reshape(2, -1).transpose(0, 1)
    model_inputs = {"attention": torch.ones(input_ids.shape[0])}
    model_inputs["decoder_input_ids"] = apply_delay_mask(input_ids, -1, delay_mask)
    return model_inputs


def generate(prepare, ids, mask):
    return prepare(ids, mask)


ids = torch.arange(8).reshape(2, 4)
mask = torch.full((4, 2), -1)
mask[0] = 7
prepared = generate(prepare_inputs, ids, mask)
first = prepared["decoder_input_ids"].float()
