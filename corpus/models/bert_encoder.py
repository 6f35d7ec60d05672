"""bert_encoder — a real transformers BertModel (small, random weights) over (batch, seq).

BertModel from a small BertConfig (vocab 99, hidden 32, 2 layers, 2 heads, intermediate 37,
64 positions, 2 token types; eager attention), seeded so the weights are deterministic; no
download. Wrapped so forward(input_ids, token_type_ids, attention_mask) returns plain tensors
(last_hidden_state (batch, seq, 32), pooler_output (batch, 32)). All three inputs are int64
(batch, seq), batch in [1, 8], seq in [1, 64] (64 = max_position_embeddings). The exported
program's user inputs are named after forward()'s parameters.

Index contract (not in the shapes): input_ids in [0, 98], token_type_ids in [0, 1],
attention_mask 0/1. The three inputs feed embedding lookups (input_ids, token_type_ids) and
the additive attention mask; the exported program shows which input indexes which table.
"""
import torch
from torch.export import Dim

VOCAB = 99
TYPE_VOCAB = 2
MAX_POS = 64

PLAIN = True  # corpus/build.py also writes bert_encoder.plain.pt2 (no aoti-fuzz metadata)


class BertEncoder(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, token_type_ids, attention_mask):
        out = self.bert(input_ids=input_ids, token_type_ids=token_type_ids,
                        attention_mask=attention_mask, return_dict=True)
        return out.last_hidden_state, out.pooler_output


def build():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=37, max_position_embeddings=MAX_POS, type_vocab_size=TYPE_VOCAB,
                     attn_implementation="eager")
    return BertEncoder(BertModel(cfg)).eval()


def make():
    module = build()
    g = torch.Generator().manual_seed(0)
    b, s = 2, 8
    args = (torch.randint(0, VOCAB, (b, s), generator=g),
            torch.randint(0, TYPE_VOCAB, (b, s), generator=g),
            torch.ones(b, s, dtype=torch.int64))
    batch = Dim("batch", min=1, max=8)
    seq = Dim("seq", min=1, max=MAX_POS)
    dims = {0: batch, 1: seq}
    return {
        "module": module,
        "args": args,
        "dynamic_shapes": {"input_ids": dims, "token_type_ids": dims, "attention_mask": dims},
    }


_HEALTHY = [{"batch": b, "seq": s} for b in (1, 2, 8) for s in (1, 2, 7, 16, 64)]

EXPECTED = {
    "summary": "transformers BertModel (2 layers, hidden 32, eager attention) over (batch, seq): "
               "no failing shape in the declared range; seq = 0 (below min) crashes the package",
    "failing": [],
    # checked one process per shape (random ids/types, random 0/1 mask), and in-process for
    # every (batch, seq) in [1, 8] x [1, 64] against ep.module() (rtol 1e-4, atol 1e-5)
    "healthy": _HEALTHY,
    # bounds the compiled check_input_N enforce (only with AOTI_RUNTIME_CHECK_INPUTS=1),
    # per Dim name; below them a checked Run fails with "dim value is too small".
    "compiled": {"batch": [2, 8], "seq": [2, 64]},
    # the values each integer input must take (not in the shapes; the exported program shows
    # input_ids and token_type_ids indexing embedding tables of 99 and 2 rows)
    "valid_values": {"input_ids": [0, VOCAB - 1], "token_type_ids": [0, TYPE_VOCAB - 1],
                     "attention_mask": [0, 1]},
    # outside the contract, AOTI_RUNTIME_CHECK_INPUTS unset; "fill" names the input filled
    # with that one value (the others stay in range); "eager" is what the nn.Module does
    "beyond_contract": [
        {"shape": {"batch": 2, "seq": 0}, "what": "size below declared min", "class": "SIGNAL",
         "signature_contains": "SIGSEGV",
         "eager": "RUNTIME_ERROR cannot reshape tensor of 0 elements into shape [2, 0, -1, 16]"},
        {"shape": {"batch": 0, "seq": 8}, "what": "size below declared min", "class": "OK",
         "signature_contains": "",
         "eager": "RUNTIME_ERROR cannot reshape tensor of 0 elements into shape [0, 8, -1, 16]"},
        {"shape": {"batch": 0, "seq": 0}, "what": "size below declared min", "class": "OK",
         "signature_contains": "",
         "eager": "RUNTIME_ERROR cannot reshape tensor of 0 elements into shape [0, 0, -1, 16]"},
        {"shape": {"batch": 2, "seq": 8}, "fill": {"token_type_ids": 5}, "what": "index values out of range",
         "class": "RUNTIME_ERROR", "signature_contains": "index out of bounds",
         "eager": "RUNTIME_ERROR IndexError: index out of range in self"},
        {"shape": {"batch": 2, "seq": 8}, "fill": {"token_type_ids": 2}, "what": "index values out of range",
         "class": "RUNTIME_ERROR", "signature_contains": "index out of bounds",
         "eager": "RUNTIME_ERROR IndexError: index out of range in self"},
        {"shape": {"batch": 2, "seq": 8}, "fill": {"input_ids": VOCAB}, "what": "index values out of range",
         "class": "RUNTIME_ERROR", "signature_contains": "index out of bounds",
         "eager": "RUNTIME_ERROR IndexError: index out of range in self"},
        {"shape": {"batch": 2, "seq": 8}, "fill": {"input_ids": 1000}, "what": "index values out of range",
         "class": "RUNTIME_ERROR", "signature_contains": "index out of bounds",
         "eager": "RUNTIME_ERROR IndexError: index out of range in self"},
        {"shape": {"batch": 2, "seq": 65}, "what": "size above declared max", "class": "RUNTIME_ERROR",
         "signature_contains": "index out of bounds",
         "eager": "RUNTIME_ERROR The size of tensor a (65) must match the size of tensor b (64)"},
        {"shape": {"batch": 9, "seq": 8}, "what": "size above declared max", "class": "OK",
         "signature_contains": "", "eager": "OK, same outputs"},
    ],
    "conditions": "AOTI_RUNTIME_CHECK_INPUTS unset; measured on torch 2.13.0+cpu, transformers 5.23.0",
    "minimal": None,
}
