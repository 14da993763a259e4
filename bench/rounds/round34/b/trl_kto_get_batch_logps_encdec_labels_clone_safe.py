# label: safe
# why: the commit's get_batch_logps clones the labels in the encoder-decoder branch as well (`labels = labels.clone()`, "Fixes end-dec RuntimeError"), so the dummy-token write touches a private copy and the reference forward still sees the -100 padding of batch["completion_labels"].
# source: https://github.com/huggingface/trl/commit/d153183b3758396093ec3a742a4bf182158a54d7
from typing import Dict, List, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Seq2SeqLMOutput(dict):
    def __getattr__(self, name):
        return self[name]


class TinyEncoderDecoder(nn.Module):
    def __init__(self, vocab=24, d=16):
        super().__init__()
        self.shared = nn.Embedding(vocab, d)
        self.encoder = nn.Linear(d, d)
        self.decoder = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None, labels=None):
        enc = torch.tanh(self.encoder(self.shared(input_ids)))
        enc = (enc * attention_mask.unsqueeze(-1)).sum(1) / attention_mask.sum(1, keepdim=True)
        dec, _ = self.decoder(self.shared(decoder_input_ids), enc.unsqueeze(0).contiguous())
        logits = self.lm_head(dec)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
        return Seq2SeqLMOutput(logits=logits, loss=loss)


class KTOTrainer:
    def __init__(self, model, ref_model, beta=0.1):
        self.model = model
        self.ref_model = ref_model
        self.beta = beta
        self.is_encoder_decoder = True
        self.label_pad_token_id = -100

    @staticmethod
    def get_batch_logps(
        logits: torch.FloatTensor,
        labels: torch.LongTensor,
        average_log_prob: bool = False,
        label_pad_token_id: int = -100,
        is_encoder_decoder: bool = False,
    ) -> torch.FloatTensor:
        """Compute the log probabilities of the given labels under the given logits."""
        if logits.shape[:-1] != labels.shape:
            raise ValueError("Logits (batch and sequence length dim) and labels must have the same shape.")

        if not is_encoder_decoder:
            labels = labels[:, 1:].clone()
            logits = logits[:, :-1, :]
        else:
            # Fixes end-dec RuntimeError
            labels = labels.clone()

        loss_mask = labels != label_pad_token_id

        # dummy token; we'll ignore the losses on these tokens later
        labels[labels == label_pad_token_id] = 0

        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)

        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        else:
            return (per_token_logps * loss_mask).sum(-1)

    def forward(self, model: nn.Module, batch: Dict[str, Union[List, torch.LongTensor]]) -> Tuple[torch.FloatTensor, ...]:
        if self.is_encoder_decoder:
            all_logits = model(
                batch["prompt_input_ids"],
                attention_mask=batch["prompt_attention_mask"],
                decoder_input_ids=batch["completion_decoder_input_ids"],
                labels=batch["completion_labels"],
            ).logits
        else:
            all_logits = model(batch["completion_input_ids"], attention_mask=batch["completion_attention_mask"]).logits

        all_logps = self.get_batch_logps(
            all_logits,
            batch["completion_labels"],
            average_log_prob=False,
            is_encoder_decoder=self.is_encoder_decoder,
            label_pad_token_id=self.label_pad_token_id,
        )

        chosen_idx = [i for i in range(all_logps.shape[0]) if batch["label"][i] is True]
        rejected_idx = [i for i in range(all_logps.shape[0]) if batch["label"][i] is False]

        chosen_logps = all_logps[chosen_idx, ...]
        rejected_logps = all_logps[rejected_idx, ...]

        chosen_logits = all_logits[chosen_idx, ...]
        rejected_logits = all_logits[rejected_idx, ...]

        return (chosen_logps, rejected_logps, chosen_logits, rejected_logits)

    def kto_loss(self, policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps):
        # eqn (7) of the HALOs paper
        chosen_KL = (policy_chosen_logps - reference_chosen_logps).mean().clamp(min=0)
        rejected_KL = (policy_rejected_logps - reference_rejected_logps).mean().clamp(min=0)

        chosen_logratios = policy_chosen_logps - reference_chosen_logps
        rejected_logratios = policy_rejected_logps - reference_rejected_logps
        losses = torch.cat(
            (
                1 - F.sigmoid(self.beta * (chosen_logratios - rejected_KL)),
                1 - F.sigmoid(self.beta * (chosen_KL - rejected_logratios)),
            ),
            0,
        )
        chosen_rewards = self.beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps - reference_rejected_logps).detach()
        return losses, chosen_rewards, rejected_rewards

    def get_batch_loss_metrics(self, model, batch):
        (policy_chosen_logps, policy_rejected_logps, policy_chosen_logits, policy_rejected_logits) = self.forward(model, batch)
        with torch.no_grad():
            (reference_chosen_logps, reference_rejected_logps, _, _) = self.forward(self.ref_model, batch)
        losses, chosen_rewards, rejected_rewards = self.kto_loss(
            policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps
        )
        return losses.mean(), reference_chosen_logps, reference_rejected_logps


def main():
    model = TinyEncoderDecoder()
    ref_model = TinyEncoderDecoder()
    ref_model.load_state_dict({k: v + 0.05 * torch.randn_like(v) for k, v in model.state_dict().items()})
    trainer = KTOTrainer(model, ref_model)
    completion_labels = torch.randint(1, 24, (4, 6))
    completion_labels[0, 4:] = -100
    completion_labels[1, 3:] = -100
    completion_labels[3, 5:] = -100
    batch = {
        "prompt_input_ids": torch.randint(1, 24, (4, 5)),
        "prompt_attention_mask": torch.ones(4, 5),
        "completion_decoder_input_ids": torch.cat([torch.zeros(4, 1, dtype=torch.long), completion_labels[:, :-1].clamp(min=0)], dim=1),
        "completion_labels": completion_labels,
        "label": [True, False, True, False],
    }
    loss, ref_chosen, ref_rejected = trainer.get_batch_loss_metrics(model, batch)
    loss.backward()
    return loss.detach(), ref_chosen, ref_rejected, model.lm_head.weight.grad.clone()


loss, reference_chosen_logps, reference_rejected_logps, lm_head_grad = main()
