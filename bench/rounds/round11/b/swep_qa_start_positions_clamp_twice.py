# label: hazard raises
# why: the QA head clamps the caller's start/end position tensors in place; the second forward (clean inputs) bumps their version after the first (noisy) loss saved them as cross-entropy targets.
# source: https://github.com/seanie12/SWEP/issues/3
import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss

torch.manual_seed(0)


class TinyBertForQuestionAnswering(nn.Module):
    def __init__(self, vocab=30, hidden=8):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.qa_outputs = nn.Linear(hidden, 2)

    def forward(self, input_ids=None, inputs_embeds=None, attention_mask=None,
                start_positions=None, end_positions=None):
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        sequence_output = torch.tanh(self.encoder(inputs_embeds))
        sequence_output = sequence_output * attention_mask.unsqueeze(-1)
        logits = self.qa_outputs(sequence_output)
        start_logits, end_logits = logits.split(1, dim=-1)
        start_logits = start_logits.squeeze(-1)
        end_logits = end_logits.squeeze(-1)

        total_loss = None
        if start_positions is not None and end_positions is not None:
            if len(start_positions.size()) > 1:
                start_positions = start_positions.squeeze(-1)
            if len(end_positions.size()) > 1:
                end_positions = end_positions.squeeze(-1)
            ignored_index = start_logits.size(1)
            start_positions.clamp_(0, ignored_index)  # <-- IPL004, IPL001: clamps caller's label tensor that the first call's loss saved
            end_positions.clamp_(0, ignored_index)  # <-- IPL004, IPL001: same for end positions
            loss_fct = CrossEntropyLoss(ignore_index=ignored_index)
            start_loss = loss_fct(start_logits, start_positions)
            end_loss = loss_fct(end_logits, end_positions)
            total_loss = (start_loss + end_loss) / 2
        return total_loss, start_logits, end_logits


class SWEPModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert_model = TinyBertForQuestionAnswering()
        self.noise_net = nn.Linear(8, 8)

    def forward(self, input_ids, attention_mask, start_positions, end_positions):
        embeddings = self.bert_model.word_embeddings
        inputs_embeds = embeddings(input_ids)
        noise = torch.sigmoid(self.noise_net(inputs_embeds)) * 2
        inputs = {"inputs_embeds": inputs_embeds * noise,
                  "attention_mask": attention_mask,
                  "start_positions": start_positions,
                  "end_positions": end_positions}
        noise_outputs = self.bert_model(**inputs)
        noise_loss = noise_outputs[0]

        new_inputs = {"inputs_embeds": inputs_embeds,
                      "attention_mask": attention_mask,
                      "start_positions": start_positions,
                      "end_positions": end_positions}
        outputs = self.bert_model(**new_inputs)
        loss = outputs[0]
        return loss + noise_loss


model = SWEPModel()
input_ids = torch.randint(0, 30, (4, 6))
attention_mask = torch.ones(4, 6)
start_positions = torch.tensor([1, 2, 7, 0])
end_positions = torch.tensor([3, 4, 9, 1])

total_loss = model(input_ids, attention_mask, start_positions, end_positions)
total_loss.backward()
